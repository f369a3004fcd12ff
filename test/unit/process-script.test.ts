import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { processScript } from '../../shared/processes/process-script.js';

describe('processScript', () => {
  const dist = mkdtempSync(join(tmpdir(), 'ackcrawl-process-script-'));
  after(() => rmSync(dist, { recursive: true, force: true }));
  const entry = join(dist, 'scheduler', 'main.js');
  const bundle = join(dist, 'bundle', 'scheduler', 'main.js');
  mkdirSync(join(dist, 'scheduler'), { recursive: true });
  writeFileSync(entry, '');
  const setTimes = (path: string, seconds: number): void => utimesSync(path, seconds, seconds);

  it('starts the entry point itself while there is no bundle', () => {
    assert.equal(processScript(entry, dist), entry);
  });

  it('starts the bundle when it is at least as new as the entry point', () => {
    mkdirSync(join(dist, 'bundle', 'scheduler'), { recursive: true });
    writeFileSync(bundle, '');
    setTimes(entry, 1_000);
    setTimes(bundle, 2_000);
    assert.equal(processScript(entry, dist), bundle);
    setTimes(bundle, 1_000);
    assert.equal(processScript(entry, dist), bundle);
  });

  it('does not start a bundle older than the entry point (tsc ran after the bundling)', () => {
    setTimes(entry, 3_000);
    setTimes(bundle, 2_000);
    assert.equal(processScript(entry, dist), entry);
  });

  it('leaves a script outside dist alone', () => {
    const elsewhere = join(tmpdir(), 'somewhere', 'main.js');
    assert.equal(processScript(elsewhere, dist), elsewhere);
  });
});
