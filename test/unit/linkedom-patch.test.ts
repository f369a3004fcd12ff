import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { parseHTML } from 'linkedom';

/** patches/linkedom+0.18.15.patch: listener maps are made on demand, and events behave as before. */
describe('the patched linkedom', () => {
  test('is the one installed (npm ci runs patch-package)', () => {
    const require = createRequire(import.meta.url);
    const root = dirname(require.resolve('linkedom/package.json'));
    for (const flavour of ['esm', 'cjs']) {
      const source = readFileSync(join(root, flavour, 'interface', 'event-target.js'), 'utf8');
      const constructor = /constructor\(\) \{([^}]*)\}/.exec(source)?.[1] ?? '';
      assert.doesNotMatch(constructor, /wm\.set/, `${flavour}: the constructor still makes a map per node`);
    }
  });

  test('listeners are added, fired, fired once, removed; removing from a bare node is a no-op', () => {
    const { document } = parseHTML('<html><body><div id="a"><p id="b">x</p></div></body></html>');
    const outer = document.getElementById('a');
    const inner = document.getElementById('b');
    assert.ok(outer && inner);
    const seen: string[] = [];
    const onOuter = (e: { type: string }): void => void seen.push(`outer:${e.type}`);
    outer.addEventListener('ping', onOuter);
    inner.addEventListener('ping', () => seen.push('inner:once'), { once: true });
    inner.dispatchEvent(new document.defaultView.Event('ping', { bubbles: true }));
    inner.dispatchEvent(new document.defaultView.Event('ping', { bubbles: true }));
    assert.deepEqual(seen, ['inner:once', 'outer:ping', 'outer:ping']);
    outer.removeEventListener('ping', onOuter);
    inner.dispatchEvent(new document.defaultView.Event('ping', { bubbles: true }));
    assert.equal(seen.length, 3, 'removed');
    const bare = document.createElement('span');
    bare.removeEventListener('ping', onOuter);
    assert.equal(bare.dispatchEvent(new document.defaultView.Event('ping')), true);
  });
});
