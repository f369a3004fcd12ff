import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { cleanHtml } from '../../master/extract/clean-html.js';
import { dropLayoutWhitespace } from '../../master/extract/layout-whitespace.js';
import { blockText } from '../../master/extract/main-text.js';
import { LeanReadability, REPLACED_METHODS } from '../../master/extract/lean-readability.js';
import { stripUnread } from '../../master/extract/strip-unread.js';
import { labelledPageHtml, labelledPages } from '../../scripts/bench/extract/fixtures.js';

describe('white space no browser renders is dropped before the DOM is built', () => {
  test('between block tags and at the edges of blocks; kept between inline tags and inside <pre>', () => {
    assert.equal(
      dropLayoutWhitespace('<div>\n  <p>a</p>\n  <p>b</p>\n</div>'),
      '<div><p>a</p><p>b</p></div>',
    );
    assert.equal(dropLayoutWhitespace('<p class="q">\n<b>t</b>\n</p>'), '<p class="q"><b>t</b></p>');
    assert.equal(dropLayoutWhitespace('<a>x</a> <a>y</a>'), '<a>x</a> <a>y</a>', 'it separates two words');
    assert.equal(dropLayoutWhitespace('<span>z</span> <br/> w'), '<span>z</span><br/> w');
    const pre = '<pre>\n  <div> x </div>\n  <p>y</p>\n</pre>';
    assert.equal(dropLayoutWhitespace(`<div>\n${pre}</div>`), `<div>${pre}</div>`);
    assert.equal(dropLayoutWhitespace('<textarea>\n <p>\n</textarea>'), '<textarea>\n <p>\n</textarea>');
    assert.equal(dropLayoutWhitespace('text <divx> more'), 'text <divx> more', 'not a block tag');
  });

  test('a page of a million spaces after a block tag costs one pass', () => {
    const spaces = ' '.repeat(1_000_000);
    const started = performance.now();
    assert.equal(dropLayoutWhitespace(`<div>${spaces}x`), `<div>${spaces}x`, 'before text: kept');
    assert.equal(dropLayoutWhitespace(`<div>${spaces}<p>x`), '<div><p>x');
    assert.equal(
      dropLayoutWhitespace('<pre>'.repeat(100_000)).length,
      500_000,
      'an unclosed <pre> keeps the rest',
    );
    assert.ok(performance.now() - started < 2_000, 'linear, not quadratic');
  });

  test('the blocks of a page read the same with and without it', () => {
    const html =
      '<html><body>\n<article>\n  <h1>Title</h1>\n  <p>One <b>two</b> <i>three</i>\n</p>\n' +
      '<ul>\n  <li>four</li>\n  <li>five</li>\n</ul>\n</article>\n</body></html>';
    const read = (h: string): string => blockText(parseHTML(h).document.body as never);
    assert.equal(read(dropLayoutWhitespace(html)), read(html));
    assert.equal(read(html), 'Title\n\nOne two three\n\nfour\n\nfive');
  });
});

describe('LeanReadability', () => {
  test('the private methods it replaces exist in this @mozilla/readability (an upgrade that renames them fails here)', () => {
    const proto = Readability.prototype as unknown as Record<string, unknown>;
    for (const name of REPLACED_METHODS) assert.equal(typeof proto[name], 'function', name);
  });

  test('hidden elements are still left out: display none (also !important), visibility hidden, hidden, aria-hidden', () => {
    const para = (text: string): string =>
      `<p>${text} ${'filler words in a long paragraph, '.repeat(12)}</p>`;
    const html = `<html><head><title>t</title></head><body><article>
      ${para('Visible one.')}
      <div style="color: red; display:none !important">${para('Hidden by style.')}</div>
      <div style="visibility: hidden">${para('Hidden by visibility.')}</div>
      <div hidden>${para('Hidden by attribute.')}</div>
      <div aria-hidden="true">${para('Hidden from readers.')}</div>
      ${para('Visible two.')}</article></body></html>`;
    const text = cleanHtml(html, 'https://a.test/').mainText;
    assert.match(text, /Visible one\./);
    assert.match(text, /Visible two\./);
    assert.doesNotMatch(text, /Hidden/);
  });

  test('gives the same article as Readability itself on every labelled page', () => {
    for (const { name } of labelledPages()) {
      const html = stripUnread(labelledPageHtml(name).toString('utf8'));
      const read = (Reader: typeof Readability): string => {
        const article = new Reader(parseHTML(html).document as never, { keepClasses: true }).parse();
        return `${article?.title}|${article?.byline}|${article?.textContent}`;
      };
      assert.equal(read(LeanReadability), read(Readability), name);
    }
  });
});
