import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractLinks } from '../../client/crawler/parse/link-extractor.js';

const PAGE = 'https://site.example/dir/page.html';

/** The links of `html` on PAGE, with the page origin shortened to '' for readable expectations. */
function linksOf(html: string, pageUrl = PAGE): string[] {
  return extractLinks(html, pageUrl).links.map(short);
}

function followOf(html: string, pageUrl = PAGE): string[] {
  return extractLinks(html, pageUrl).follow.map(short);
}

function short(url: string): string {
  return url.startsWith('https://site.example/') ? url.slice('https://site.example'.length) : url;
}

test('a[href] and area[href] in document order, resolved against the page URL', () => {
  const html = `<!doctype html><html><head><title>t</title></head><body>
    <a href="/root">root</a>
    <p><a href="sibling.html">sibling</a> and <a href="../up/">up</a></p>
    <map name="m"><area shape="rect" coords="0,0,1,1" href="area.html"><area nohref></map>
    <a>no href</a><a name="anchor">named</a>
    <a href="https://other.example/x?y=1">abs</a>
  </body></html>`;
  assert.deepEqual(linksOf(html), [
    '/root',
    '/dir/sibling.html',
    '/up/',
    '/dir/area.html',
    'https://other.example/x?y=1',
  ]);
  assert.deepEqual(followOf(html), linksOf(html));
});

test('other elements with href or src are not links', () => {
  const html = `<link rel="next" href="/next"><script src="/s.js"></script><img src="/i.png">
    <iframe src="/frame"></iframe><form action="/post"></form><div href="/div"></div>
    <a href="/real">x</a>`;
  assert.deepEqual(linksOf(html), ['/real']);
});

test('upper-case tags and attributes, unquoted and single-quoted values', () => {
  const html = `<A HREF=/one>1</A><a HrEf='/two'>2</a><AREA href=three><a href=/four?x=1&y=2>4</a>`;
  assert.deepEqual(linksOf(html), ['/one', '/two', '/dir/three', '/four?x=1&y=2']);
});

test('character references in attributes are decoded as browsers decode them', () => {
  const html = `<a href="/a?x=1&amp;y=2">1</a><a href="/&#x62;&#99;">2</a>
    <a href="/q?copy=1&copy=2&lt=3">legacy entity before '=' is kept</a>
    <a href="/s?a=1&amp;amp;b=2">double-encoded</a>`;
  assert.deepEqual(linksOf(html), ['/a?x=1&y=2', '/bc', '/q?copy=1&copy=2&lt=3', '/s?a=1&amp;b=2']);
});

test('whitespace and newlines in hrefs: trimmed at the ends, tabs and newlines dropped inside', () => {
  const html = `<a href="
      /spaced/path
    ">1</a><a href="/multi
line\tpath">2</a><a href="  /inner space  ">3</a>`;
  assert.deepEqual(linksOf(html), ['/spaced/path', '/multilinepath', '/inner%20space']);
});

test('non-ASCII hrefs are percent-encoded as UTF-8; IDN hosts become punycode', () => {
  const html = `<a href="/ü/ñ?q=日本">1</a><a href="https://bücher.example/straße">2</a>
    <a href="/%7Euser/%2f">3</a>`;
  assert.deepEqual(linksOf(html), [
    '/%C3%BC/%C3%B1?q=%E6%97%A5%E6%9C%AC',
    'https://xn--bcher-kva.example/stra%C3%9Fe',
    '/~user/%2F',
  ]);
});

test('protocol-relative hrefs take the page scheme', () => {
  assert.deepEqual(linksOf('<a href="//cdn.example/lib">x</a>'), ['https://cdn.example/lib']);
  assert.deepEqual(linksOf('<a href="//cdn.example/lib">x</a>', 'http://site.example/'), [
    'http://cdn.example/lib',
  ]);
});

test('javascript:, mailto:, tel:, data: and other schemes are skipped, whatever their spelling', () => {
  const html = `<a href="javascript:void(0)">1</a><a href="JavaScript:alert(1)">2</a>
    <a href="  javascript:go()">3</a><a href="java\nscript:x()">4</a><a href="JAVASCRIPT:;">5</a>
    <a href="mailto:someone@example.com">6</a><a href="MAILTO:x@y.z">7</a><a href="tel:+15551234">8</a>
    <a href="data:text/html,<b>hi</b>">9</a><a href="ftp://files.example/">10</a>
    <a href="sms:123">11</a><a href="file:///etc/passwd">12</a><a href="about:blank">13</a>
    <a href="/kept">kept</a>`;
  assert.deepEqual(linksOf(html), ['/kept']);
});

test('links to the page itself are skipped: empty href, fragments, its own URL', () => {
  const html = `<a href="">1</a><a href>2</a><a href="#top">3</a><a href="#">4</a>
    <a href="page.html">5</a><a href="/dir/page.html#section">6</a><a href="page.html?">7</a>
    <a href="HTTPS://SITE.EXAMPLE:443/dir/./page.html">8</a>
    <a href="page.html?x=1">other query</a><a href="/dir/">directory</a>`;
  assert.deepEqual(linksOf(html), ['/dir/page.html?x=1', '/dir/']);
});

test('a page URL with a fragment or in another spelling still recognises self links', () => {
  assert.deepEqual(
    linksOf('<a href="#a">1</a><a href="/x">2</a>', 'HTTPS://Site.Example/dir/page.html#frag'),
    ['/x'],
  );
});

test('invalid hrefs are dropped without failing the page', () => {
  const html = `<a href="http://exa mple.com/">1</a><a href="http://[::1/">2</a><a href="http://">3</a>
    <a href="https://example.com:99999/">4</a><a href="/${'a'.repeat(9000)}">too long</a><a href="/ok">ok</a>`;
  assert.deepEqual(linksOf(html), ['/ok']);
});

test('duplicates are removed, keeping the first occurrence in order', () => {
  const html = `<a href="/a">1</a><a href="/b">2</a><a href="/a#x">3</a><a href="https://site.example/b">4</a>
    <a href="/c">5</a><a href="/%61">6</a><a href="/A">7</a>`;
  assert.deepEqual(linksOf(html), ['/a', '/b', '/c', '/A']);
});

test('base href: relative, resolved against the page, applies to links before it too', () => {
  const html = `<a href="before">1</a><head><base href="/other/"></head><a href="after">2</a><a href="/abs">3</a>`;
  const result = extractLinks(html, PAGE);
  assert.deepEqual(result.links.map(short), ['/other/before', '/other/after', '/abs']);
  assert.equal(result.baseUrl, 'https://site.example/other/');
});

test('base href: absolute, on another host', () => {
  const html = `<base href="https://cdn.example/root/"><a href="x">1</a><a href="">2</a><a href="#f">3</a>
    <a href="${PAGE}">self</a><a href="//third.example/">4</a>`;
  const result = extractLinks(html, PAGE);
  // With a base, "" and "#f" resolve to the base, which is another page than this one.
  assert.deepEqual(result.links, [
    'https://cdn.example/root/x',
    'https://cdn.example/root/',
    'https://third.example/',
  ]);
  assert.equal(result.baseUrl, 'https://cdn.example/root/');
});

test('multiple base elements: the first one with an href wins', () => {
  const html = `<base target="_blank"><base href="/first/"><base href="https://second.example/"><a href="x">`;
  const result = extractLinks(html, PAGE);
  assert.deepEqual(result.links.map(short), ['/first/x']);
  assert.equal(result.baseUrl, 'https://site.example/first/');
});

test('an unusable base href is ignored: unparsable, javascript:, data:', () => {
  for (const base of ['http://[bad', 'javascript:alert(1)', 'data:text/html,x']) {
    const result = extractLinks(`<base href="${base}"><a href="x">`, PAGE);
    assert.deepEqual(result.links.map(short), ['/dir/x'], base);
    assert.equal(result.baseUrl, PAGE, base);
  }
});

test('a base on a non-http scheme makes relative links non-http, so they are dropped', () => {
  const result = extractLinks(
    '<base href="ftp://files.example/"><a href="x">1</a><a href="https://a.example/">2',
    PAGE,
  );
  assert.deepEqual(result.links, ['https://a.example/']);
  assert.equal(result.baseUrl, 'ftp://files.example/');
});

test('baseUrl is the page URL when there is no base element', () => {
  assert.equal(extractLinks('<a href="x">', PAGE).baseUrl, PAGE);
  assert.equal(extractLinks('', 'https://Site.Example/a#f').baseUrl, 'https://site.example/a#f');
});

test('rel=nofollow keeps a link out of follow; rel is a case-insensitive token list', () => {
  const html = `<a href="/plain">1</a><a href="/nf" rel="nofollow">2</a>
    <a href="/nf-upper" rel="NOFOLLOW">3</a><a href="/nf-list" rel="noopener NoFollow noreferrer">4</a>
    <a href="/nf-tab" rel="external\tnofollow\n">5</a><a href="/not-token" rel="nofollowme">6</a>
    <a href="/ugc" rel="ugc sponsored">7</a><a href="/comma" rel="nofollow,noopener">8</a>
    <area href="/area-nf" rel="nofollow">`;
  assert.deepEqual(linksOf(html), [
    '/plain',
    '/nf',
    '/nf-upper',
    '/nf-list',
    '/nf-tab',
    '/not-token',
    '/ugc',
    '/comma',
    '/area-nf',
  ]);
  assert.deepEqual(followOf(html), ['/plain', '/not-token', '/ugc', '/comma']);
});

test('a link is followed if any of its occurrences is followable', () => {
  const html = `<a href="/a" rel="nofollow">1</a><a href="/b">2</a><a href="/a">3</a>
    <a href="/c" rel="nofollow">4</a><a href="/c" rel="nofollow">5</a><a href="/b" rel="nofollow">6</a>`;
  assert.deepEqual(linksOf(html), ['/a', '/b', '/c']);
  assert.deepEqual(followOf(html), ['/a', '/b']);
});

test('meta robots nofollow or none empties follow, whatever the case and separators', () => {
  for (const meta of [
    '<meta name="robots" content="nofollow">',
    '<meta name="robots" content="NOFOLLOW, noindex">',
    '<meta name="ROBOTS" content="noindex,nofollow">',
    '<META NAME=Robots CONTENT="noindex nofollow">',
    '<meta name="robots" content="none">',
    '<meta name="robots" content=" None ">',
    '<meta content="nofollow" name="robots">',
    '<meta name=" robots " content="index, nofollow">',
    '<meta name="ackcrawl" content="nofollow">',
    '<meta name="AckCrawl" content="none">',
  ]) {
    const result = extractLinks(`<head>${meta}</head><a href="/x">x</a>`, PAGE);
    assert.equal(result.metaNofollow, true, meta);
    assert.deepEqual(result.follow, [], meta);
    assert.deepEqual(result.links.map(short), ['/x'], meta);
  }
});

test('meta robots without nofollow, or for another crawler, changes nothing', () => {
  for (const meta of [
    '<meta name="robots" content="noindex">',
    '<meta name="robots" content="index, follow">',
    '<meta name="robots" content="nofollowing">',
    '<meta name="robots">',
    '<meta name="googlebot" content="nofollow">',
    '<meta http-equiv="robots" content="nofollow">',
    '<meta property="robots" content="nofollow">',
    '<meta name="description" content="nofollow">',
  ]) {
    const result = extractLinks(`<head>${meta}</head><a href="/x">x</a>`, PAGE);
    assert.equal(result.metaNofollow, false, meta);
    assert.deepEqual(result.follow.map(short), ['/x'], meta);
  }
});

test('meta robots anywhere in the document counts, also after the links', () => {
  const result = extractLinks('<a href="/x">x</a><meta name="robots" content="nofollow">', PAGE);
  assert.equal(result.metaNofollow, true);
  assert.deepEqual(result.follow, []);
});

test('links inside comments are not extracted', () => {
  const html = `<!-- <a href="/commented">x</a> --><a href="/real">1</a>
    <!--[if IE]><a href="/ie-only">ie</a><![endif]-->
    <!----><!-- a -- b <a href="/still-comment"> --!><a href="/after">2</a>
    <!--<base href="https://evil.example/">-->`;
  assert.deepEqual(linksOf(html), ['/real', '/after']);
});

test('script, style and other raw-text content yields no links', () => {
  const html = `<script>document.write('<a href="/from-script">x</a>'); if (a<b) {}</script>
    <script type="text/template"><a href="/template-script"></a></script>
    <script><!-- document.write("<script><a href='/escaped'></script>") --></script>
    <style>a[href="/css"]::after { content: "<a href='/style'>" }</style>
    <title>About <a href="/title"></title><textarea><a href="/textarea"></textarea>
    <iframe><a href="/iframe"></a></iframe><xmp><a href="/xmp"></xmp>
    <noembed><a href="/noembed"></noembed><noframes><a href="/noframes"></noframes>
    <a href="/after">after</a>`;
  assert.deepEqual(linksOf(html), ['/after']);
});

test('a script containing </script> in a string ends there, as in browsers', () => {
  const html = `<script>var s = "</script><a href="/after-script-end">";</script>`;
  assert.deepEqual(linksOf(html), ['/after-script-end']);
});

test('noscript content is read as markup (we run no script); template content is not', () => {
  const html = `<head><noscript><meta name="x" content="y"></noscript></head>
    <noscript><a href="/noscript">x</a></noscript>
    <template><a href="/template">t</a><template><a href="/nested"></template><a href="/still-template"></template>
    <template><base href="https://evil.example/"><meta name="robots" content="nofollow"></template>
    <a href="/after">after</a>`;
  const result = extractLinks(html, PAGE);
  assert.deepEqual(result.links.map(short), ['/noscript', '/after']);
  assert.equal(result.metaNofollow, false);
  assert.equal(result.baseUrl, PAGE);
});

test('an unclosed template hides the rest of the page, as in browsers', () => {
  assert.deepEqual(linksOf('<a href="/a">1</a><template><a href="/b">2</a>'), ['/a']);
  assert.deepEqual(linksOf('</template><a href="/a">stray end tag</a>'), ['/a']);
});

test('plaintext turns the rest of the page into text', () => {
  assert.deepEqual(linksOf('<a href="/before">1</a><plaintext><a href="/in">2</a></plaintext>'), ['/before']);
});

test('SVG links count (href or xlink:href, href wins); MathML <a> and CDATA content do not', () => {
  const html = `<svg viewBox="0 0 10 10"><a xlink:href="/svg-xlink"><text>1</text></a>
    <a href="/svg-href" xlink:href="/svg-old"><rect/></a><a><circle/></a>
    <foreignObject><a href="/foreign-html">html inside svg</a></foreignObject>
    <![CDATA[ <a href="/cdata"> ]]></svg>
    <math><a href="/math-a"></a><mi><a href="/math-text-html">HTML again</a></mi></math>
    <a href="/html">html</a>`;
  assert.deepEqual(linksOf(html), ['/svg-xlink', '/svg-href', '/foreign-html', '/math-text-html', '/html']);
});

test('malformed markup: unclosed tags, stray <, nested anchors, an unterminated tag at EOF', () => {
  const html = `<div><a href="/one">1<a href="/two">2<p>< a href="/not-a-tag"> 1 < 2 and 3 > 2
    <<a href="/three">3</b></i></div></div></span><a href="/four" <a href="/five">
    <a href=/six class=x/><a href="/seven"id="x"><a href="/eight" href="/ignored-duplicate-attr">
    <a href="/unterminated`;
  assert.deepEqual(linksOf(html), ['/one', '/two', '/three', '/four', '/six', '/seven', '/eight']);
});

test('an unterminated comment or script swallows the rest, as in browsers', () => {
  assert.deepEqual(linksOf('<a href="/a">1</a><!-- <a href="/b">'), ['/a']);
  assert.deepEqual(linksOf('<a href="/a">1</a><script> <a href="/b">'), ['/a']);
});

test('odd inputs: empty document, text only, NUL characters, CRLF, BOM, surrogate pairs', () => {
  assert.deepEqual(extractLinks('', PAGE), {
    links: [],
    follow: [],
    metaNofollow: false,
    baseUrl: PAGE,
    canonicalUrl: null,
    refreshUrl: null,
    dropped: { tooLong: 0, overLimit: 0 },
  });
  assert.deepEqual(linksOf('just text, no tags at all'), []);
  // A NUL becomes U+FFFD: in a tag name it makes another element, in a value it is encoded.
  assert.deepEqual(linksOf('<a\0 href="/not-a">1</a><a href="/nul\0x">2</a>\0<a href="/after-nul">3</a>'), [
    '/nul%EF%BF%BDx',
    '/after-nul',
  ]);
  assert.deepEqual(linksOf('\ufeff<a\r\nhref="/crlf\r\npath"\r\n>x</a>'), ['/crlfpath']);
  assert.deepEqual(linksOf('😀 text 😀<a href="/emoji/😀">x</a>😀'), ['/emoji/%F0%9F%98%80']);
});

test('a 2 MB page: all links found, in order, quickly', () => {
  const parts: string[] = ['<!doctype html><html><head><title>big</title></head><body>'];
  let size = parts[0]?.length ?? 0;
  let count = 0;
  while (size < 2 * 1024 * 1024) {
    const chunk =
      `<div class="item"><p>Paragraph ${count} with some text &amp; entities, a < b, and more text to ` +
      `fill the line.</p><a href="/item/${count}?page=${count % 7}" title="Item ${count}">item</a>` +
      `<script>var x${count} = "<a href='/no'>";</script><!-- <a href="/no"> --></div>\n`;
    parts.push(chunk);
    size += chunk.length;
    count++;
  }
  const html = parts.join('');
  const started = performance.now();
  const result = extractLinks(html, PAGE, { maxLinks: 100_000 });
  const elapsedMs = performance.now() - started;
  assert.equal(result.links.length, count);
  assert.equal(result.links[0], 'https://site.example/item/0?page=0');
  assert.equal(result.links[count - 1], `https://site.example/item/${count - 1}?page=${(count - 1) % 7}`);
  assert.equal(result.follow.length, count);
  // Generous bound for slow CI machines; about 100 ms on a laptop core.
  assert.ok(elapsedMs < 5000, `took ${Math.round(elapsedMs)} ms`);
});

test('a page URL that is not http(s) is an error, not an empty result', () => {
  assert.throws(() => extractLinks('<a href="/x">', 'not a url'), { code: 'URL_INVALID' });
  assert.throws(() => extractLinks('<a href="/x">', 'ftp://site.example/'), {
    code: 'URL_UNSUPPORTED_SCHEME',
  });
});

test('works on http: pages and on pages with ports and userinfo', () => {
  assert.deepEqual(extractLinks('<a href="x">', 'http://site.example:8080/dir/').links, [
    'http://site.example:8080/dir/x',
  ]);
  assert.deepEqual(extractLinks('<a href="x">', 'http://u:p@site.example/dir/').links, [
    'http://u:p@site.example/dir/x',
  ]);
});
