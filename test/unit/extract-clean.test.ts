import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanHtml } from '../../master/extract/clean-html.js';
import { cleanSavedPage } from '../../master/extract/clean-saved-page.js';
import { pageLanguage } from '../../master/extract/language.js';
import { blockText } from '../../master/extract/main-text.js';
import { stripUnread } from '../../master/extract/strip-unread.js';
import { tokenF1 } from '../../scripts/bench/extract/f1.js';
import { labelOf, labelledPageHtml } from '../../scripts/bench/extract/fixtures.js';
import { parseHTML } from 'linkedom';

// The bench's labelled pages, which `npm test` fetches first (scripts/bench/extract/fixtures.ts).
const page = (name: string): Buffer => labelledPageHtml(name);
const label = (name: string): string => labelOf(name, page(name));

describe("cleaning real article pages (the extract bench's labelled pages)", () => {
  test('the Guardian: metadata from JSON-LD and meta tags, main text close to the label', () => {
    const cleaned = cleanSavedPage(page('theguardian.com.academics'), 'https://www.theguardian.com/x');
    assert.equal(cleaned.title, "Thousands of UK academics 'treated as second-class citizens'");
    assert.equal(cleaned.author, 'Richard Adams');
    assert.equal(cleaned.publishedAt, Date.parse('2020-01-20T06:05:18.000Z'));
    assert.equal(cleaned.language, 'en');
    assert.equal(
      cleaned.canonicalUrl,
      'https://www.theguardian.com/education/2020/jan/20/thousands-of-uk-academics-treated-as-second-class-citizens',
    );
    assert.match(cleaned.description ?? '', /^Report claims higher education institutions/);
    const score = tokenF1(cleaned.mainText, label('theguardian.com.academics'));
    assert.ok(score.recall > 0.99 && score.f1 > 0.95, JSON.stringify(score));
    assert.doesNotMatch(cleaned.mainText, /Share on Facebook|Reuse this content/);
  });

  test('a German page is detected as German; paragraphs are separated by blank lines', () => {
    const cleaned = cleanSavedPage(page('heise.de.lithium'), 'https://www.heise.de/x');
    assert.equal(cleaned.language, 'de');
    assert.equal(cleaned.title, 'Lithium aus dem Schredder');
    assert.ok(cleaned.mainText.includes('\n\nSchredder statt Ofen\n\n'), cleaned.mainText.slice(0, 400));
  });

  test('every labelled page keeps at least 95 % of its labelled words', () => {
    for (const name of [
      'caktusgroup.com.django',
      'dw.com.uncork',
      'nature.com.telescope',
      'threatpost.com.android',
    ]) {
      const score = tokenF1(cleanSavedPage(page(name), `https://${name}/`).mainText, label(name));
      assert.ok(score.recall >= 0.95 && score.f1 >= 0.95, `${name}: ${JSON.stringify(score)}`);
    }
  });

  test('a page in a legacy charset is decoded the way the crawler decodes it', () => {
    const html = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1252"><title>Caf'),
      Buffer.from([0xe9]),
      Buffer.from('</title></head><body><article><p>Un caf'),
      Buffer.from([0xe9]),
      Buffer.from(" crme, s'il vous pla"),
      Buffer.from([0xee]),
      Buffer.from('t. Nous parlons fran'),
      Buffer.from([0xe7]),
      Buffer.from(
        'ais ici tous les jours avec nos amis du quartier et de la ville.</p></article></body></html>',
      ),
    ]);
    const cleaned = cleanSavedPage(html, null);
    assert.equal(cleaned.title, 'Café');
    assert.match(cleaned.mainText, /Un café crme, s'il vous plaît\. Nous parlons français/);
  });
});

describe('pages that are not articles, or hostile', () => {
  test('a page without an article gives empty main text, not an error', () => {
    const cleaned = cleanHtml(
      '<html lang="fr"><head><title>Login</title></head><body><form><input></form></body></html>',
      null,
    );
    assert.equal(cleaned.title, 'Login');
    assert.equal(cleaned.mainText, '');
    assert.equal(cleaned.language, 'fr', 'too little text: the declared language');
  });

  test('more elements than the limit: refused with an error the caller logs', () => {
    const html = `<html><body>${'<div><p>x</p></div>'.repeat(3_000)}</body></html>`;
    assert.throws(() => cleanHtml(html, null, { maxElements: 1_000 }), { code: 'EXTRACT_FAILED' });
    assert.ok(cleanHtml(html, null, { maxElements: 10_000 }).mainText.length > 0);
  });

  test('deep nesting does not overflow the stack', () => {
    const depth = 20_000;
    const html = `<html><body>${'<div>'.repeat(depth)}<p>${'deep words here '.repeat(50)}</p>${'</div>'.repeat(depth)}</body></html>`;
    let threw: unknown = null;
    try {
      cleanHtml(html, null, { maxElements: 100_000 });
    } catch (err) {
      threw = err;
    }
    // Either cleaned or refused with an Error the consumer logs: never a crash of the process.
    assert.ok(threw === null || threw instanceof Error);
  });

  test('a canonical link that is not http(s) is dropped; a relative one is resolved', () => {
    const head = (href: string): string =>
      `<html><head><link rel="canonical" href="${href}"></head><body><p>x</p></body></html>`;
    assert.equal(cleanHtml(head('javascript:alert(1)'), 'https://a.example/').canonicalUrl, null);
    assert.equal(cleanHtml(head('/b?c=1'), 'https://a.example/x').canonicalUrl, 'https://a.example/b?c=1');
    assert.equal(cleanHtml(head('/b'), null).canonicalUrl, null);
  });
});

describe('stripUnread', () => {
  test('removes scripts, styles, comments and inline SVG, keeps JSON-LD and look-alike tags', () => {
    const html =
      '<p>a</p><script>if (a < b) { "</p>" }</script><SCRIPT type="module">x</SCRIPT><style>p{}</style>' +
      '<!-- <script> --><svg viewBox="0 0 1 1"><path d="M0"/></svg><scripts>kept</scripts>' +
      '<script type="application/ld+json">{"@type":"NewsArticle"}</script><p>b</p>';
    assert.equal(
      stripUnread(html),
      '<p>a</p><scripts>kept</scripts><script type="application/ld+json">{"@type":"NewsArticle"}</script><p>b</p>',
    );
  });

  test('an unclosed script runs to the end, as in a browser; linear on many of them', () => {
    assert.equal(stripUnread('<p>a</p><script>never closed <p>b</p>'), '<p>a</p>');
    // `<script<script…` is no tag in HTML (the tag name runs on): kept, and found quickly.
    const hostile = '<script'.repeat(200_000);
    const started = performance.now();
    assert.equal(stripUnread(`<p>x</p> ${hostile}`), `<p>x</p> ${hostile}`);
    assert.equal(stripUnread(`<p>x</p>${'<style '.repeat(100_000)}`), '<p>x</p>');
    assert.ok(performance.now() - started < 2_000, 'quadratic');
  });

  test('cuts page chrome with its nested elements of the same name; keeps look-alikes and forms', () => {
    assert.equal(
      stripUnread(
        '<nav class="top"><ul><li><nav>inner</nav></li></ul></nav><p>a</p><NAV>x</NAV ><navbar>kept</navbar>' +
          '<aside><p>related</p></aside><footer>(c)</footer><p>b<button type=button>Share</button></p>' +
          '<iframe src="/ad"></iframe><picture><source srcset="x.webp"><img src="x.jpg"></picture>' +
          '<form><p>c</p><select><option>1</option></select></form>',
      ),
      '<p>a</p><navbar>kept</navbar><p>b</p><form><p>c</p></form>',
    );
    // `</navigation>` does not close a nav.
    assert.equal(stripUnread('<nav>a</navigation>b</nav><p>c</p>'), '<p>c</p>');
  });

  test('an unclosed chrome element is kept for the parser; linear on many of them', () => {
    assert.equal(stripUnread('<nav><p>a</p>'), '<nav><p>a</p>');
    assert.equal(stripUnread('<nav><nav>x</nav><p>a</p>'), '<nav><nav>x</nav><p>a</p>');
    const started = performance.now();
    const hostile = '<nav>'.repeat(200_000);
    assert.equal(stripUnread(`<p>x</p>${hostile}`), `<p>x</p>${hostile}`);
    const nested = `${'<aside>'.repeat(100_000)}${'</aside>'.repeat(100_000)}<p>y</p>`;
    assert.equal(stripUnread(nested), '<p>y</p>');
    const manyClosed = '<footer>f</footer><p>z</p>'.repeat(100_000);
    assert.equal(stripUnread(manyClosed), '<p>z</p>'.repeat(100_000));
    assert.ok(performance.now() - started < 2_000, 'quadratic');
  });
});

describe('blockText and pageLanguage', () => {
  test('blocks end lines, inline elements do not, white space collapses', () => {
    const { document } = parseHTML(
      '<div><h2>Head</h2><p>One <b>bold</b>\n  word.<br>Next line</p><ul><li>a</li><li>b</li></ul><script>x</script></div>',
    );
    assert.equal(
      blockText(document.querySelector('div') as never),
      'Head\n\nOne bold word.\n\nNext line\n\na\n\nb',
    );
  });

  test('text wins over the declaration when there is enough of it', () => {
    const german =
      'Die Ökobilanz von Elektroautos wird vor allem durch die Produktion der Batterien beeinträchtigt. '.repeat(
        3,
      );
    assert.equal(pageLanguage(german, 'en-US'), 'de');
    assert.equal(pageLanguage('kurz', 'en-US'), 'en');
    assert.equal(pageLanguage('kurz', null), null);
    assert.equal(pageLanguage('kurz', 'not a tag!'), null);
  });
});

describe('tokenF1', () => {
  test('bag-of-words precision, recall and F1', () => {
    assert.deepEqual(tokenF1('a b c', 'a b c'), { precision: 1, recall: 1, f1: 1 });
    const s = tokenF1('a a b x', 'a b b');
    assert.equal(s.precision, 2 / 4);
    assert.equal(s.recall, 2 / 3);
    assert.equal(tokenF1('', 'a').f1, 0);
  });
});
