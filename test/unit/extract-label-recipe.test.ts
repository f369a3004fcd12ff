import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { labelRecipesSchema, rebuildLabel } from '../../scripts/bench/extract/label-recipe.js';

const page = `<html><body>
  <div class="teaser"><p>Not this one: the container is the first match.</p></div>
  <div class="post">
    <h2>A   heading
      over two lines</h2>
    <p>One <b>bold</b>&nbsp;word, <a href="/x">a link</a>.</p>
    <p>   </p>
    <ul><li><p>An item's paragraph</p> and its tail</li><li>Share on Twitter</li></ul>
    <pre>
  indented code
    more</pre>
    <div>Loose text in a div is no block.</div>
    <p>Share on Twitter</p>
    <p>Photo: someone</p>
  </div>
  <div class="post"><p>A second post is not read.</p></div>
</body></html>`;

describe('rebuildLabel', () => {
  test('the blocks of the first container, blank-line separated, less every block equal to a removal', () => {
    assert.equal(
      rebuildLabel(page, { container: 'div.post', removals: ['Share on Twitter', 'Photo: someone'] }),
      [
        'A heading over two lines',
        'One bold word, a link.',
        // A paragraph inside a list item is part of the item's text, not a block of its own.
        "An item's paragraph and its tail",
        // A preformatted block keeps its lines and indentation, trimmed at both ends.
        'indented code\n    more',
      ].join('\n\n') + '\n',
    );
  });

  test('without removals every block is kept', () => {
    const label = rebuildLabel(page, { container: 'div.post', removals: [] });
    assert.equal(label.split('\n\n').filter((b) => b.trim() === 'Share on Twitter').length, 2);
    assert.match(label, /^A heading over two lines\n\n/);
    assert.match(label, /\n\nPhoto: someone\n$/);
  });

  test('a recipe that no longer fits the page is refused, not silently applied', () => {
    assert.throws(
      () => rebuildLabel(page, { container: 'div.post', removals: ['Share on Facebook'] }),
      /removals that match no block: \["Share on Facebook"\]/,
    );
    assert.throws(
      () => rebuildLabel(page, { container: 'article', removals: [] }),
      /no element matches the container "article"/,
    );
  });

  test('a container without blocks gives an empty label', () => {
    assert.equal(rebuildLabel('<div id="a"><span>x</span></div>', { container: '#a', removals: [] }), '');
  });
});

describe('labelRecipesSchema', () => {
  const recipe = {
    pageSha256: 'a'.repeat(64),
    container: 'article',
    removals: ['Share'],
    labelSha256: 'b'.repeat(64),
  };

  test('takes a recipe per page name', () => {
    assert.deepEqual(
      labelRecipesSchema.parse({ pages: { 'example.org.page': recipe } }).pages['example.org.page'],
      recipe,
    );
  });

  test('refuses names that are no file name, bad hashes and unknown keys', () => {
    for (const bad of [
      { pages: { '../escape': recipe } },
      { pages: { ok: { ...recipe, labelSha256: 'xyz' } } },
      { pages: { ok: { ...recipe, removal: [] } } },
    ]) {
      assert.equal(labelRecipesSchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});
