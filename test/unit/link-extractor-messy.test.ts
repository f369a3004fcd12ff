import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { extractLinks } from '../../client/crawler/parse/link-extractor.js';
import { encodeQueryIn, urlEncodingOf } from '../../client/crawler/parse/query-encoding.js';
import { refreshTarget } from '../../client/crawler/parse/refresh.js';

const PAGE = 'https://site.example/dir/page.html';
const short = (url: string): string =>
  url.startsWith('https://site.example/') ? url.slice('https://site.example'.length) : url;

describe('non-ASCII links: UTF-8 paths, queries in the page encoding', () => {
  test('in a UTF-8 page, path and query are UTF-8 escapes', () => {
    const { links } = extractLinks('<a href="/路径/页面.html?q=中文&amp;x=1#段">x</a>', PAGE);
    assert.deepEqual(links.map(short), [
      '/%E8%B7%AF%E5%BE%84/%E9%A1%B5%E9%9D%A2.html?q=%E4%B8%AD%E6%96%87&x=1',
    ]);
  });

  test('in a GBK page, the path is UTF-8 but the query is GBK, as browsers send it', () => {
    const html = '<a href="/路径/搜索?q=中文&amp;page=2">1</a><a href="?q=中">2</a><a href="/新闻">3</a>';
    const { links } = extractLinks(html, PAGE, { encoding: 'GBK' });
    assert.deepEqual(links.map(short), [
      '/%E8%B7%AF%E5%BE%84/%E6%90%9C%E7%B4%A2?q=%D6%D0%CE%C4&page=2',
      '/dir/page.html?q=%D6%D0',
      '/%E6%96%B0%E9%97%BB',
    ]);
  });

  test('other legacy encodings: Big5, Shift_JIS, EUC-KR, windows-1251, gb18030', () => {
    const cases: [string, string, string][] = [
      ['Big5', '/s?q=中文', '/s?q=%A4%A4%A4%E5'],
      // 本 is 0x96 0x7B in Shift_JIS; 0x7B is `{`, which a query keeps as it is, as browsers do.
      ['Shift_JIS', '/s?q=日本', '/s?q=%93%FA%96{'],
      ['EUC-KR', '/s?q=한국', '/s?q=%C7%D1%B1%B9'],
      ['windows-1251', '/s?q=Мир', '/s?q=%CC%E8%F0'],
      ['gb18030', '/s?q=😀', '/s?q=%949%FC6'],
    ];
    for (const [encoding, href, expected] of cases) {
      const { links } = extractLinks(`<a href="${href}">x</a>`, PAGE, { encoding });
      assert.deepEqual(links.map(short), [expected], encoding);
    }
  });

  test('a character the page encoding lacks is sent as an escaped &#N; reference', () => {
    // 语 (simplified) has no Shift_JIS code.
    const { links } = extractLinks('<a href="/s?q=日语">x</a>', PAGE, { encoding: 'Shift_JIS' });
    assert.deepEqual(links.map(short), ['/s?q=%93%FA%26%2335821%3B']);
  });

  test('escapes the author wrote, and the fragment, are left alone', () => {
    const { links } = extractLinks('<a href="/s?q=%E4%B8%AD&amp;r=中#片段">x</a>', PAGE, { encoding: 'GBK' });
    assert.deepEqual(links.map(short), ['/s?q=%E4%B8%AD&r=%D6%D0']);
  });

  test('UTF-16 pages use UTF-8 for their URLs', () => {
    assert.equal(urlEncodingOf('UTF-16LE'), 'utf-8');
    assert.equal(urlEncodingOf('UTF-16BE'), 'utf-8');
    assert.equal(urlEncodingOf('replacement'), 'utf-8');
    assert.equal(urlEncodingOf('GBK'), 'gbk');
    const { links } = extractLinks('<a href="/s?q=中">x</a>', PAGE, { encoding: 'UTF-16LE' });
    assert.deepEqual(links.map(short), ['/s?q=%E4%B8%AD']);
  });

  test('encodeQueryIn leaves hrefs without a non-ASCII query untouched', () => {
    const href = '/中文/path?q=ascii#中';
    assert.equal(encodeQueryIn(href, 'gbk'), href);
    assert.equal(encodeQueryIn('/s?q=中', 'utf-8'), '/s?q=中');
  });

  test('<base href> applies to non-ASCII links too', () => {
    const html = '<base href="https://other.example/目录/"><a href="页面?q=中">x</a>';
    const { links } = extractLinks(html, PAGE, { encoding: 'GBK' });
    assert.deepEqual(links, ['https://other.example/%E7%9B%AE%E5%BD%95/%E9%A1%B5%E9%9D%A2?q=%D6%D0']);
  });
});

describe('<link rel=canonical>', () => {
  test('recorded resolved against the base and normalised; not a link', () => {
    const html = `<head><base href="/base/"><LINK REL="Canonical" HREF="../Article?id=1#top"></head>
      <body><a href="/x">x</a></body>`;
    const result = extractLinks(html, PAGE);
    assert.equal(result.canonicalUrl, 'https://site.example/Article?id=1');
    assert.deepEqual(result.links.map(short), ['/x']);
  });

  test('the first canonical counts; rel is a token list; others are ignored', () => {
    const html = `<link rel="alternate" href="/alt"><link rel="stylesheet canonical" href="/first">
      <link rel="canonical" href="/second">`;
    assert.equal(extractLinks(html, PAGE).canonicalUrl, 'https://site.example/first');
  });

  test('a canonical in the body, in a template, or not http(s) is ignored', () => {
    assert.equal(extractLinks('<body><link rel=canonical href="/injected">', PAGE).canonicalUrl, null);
    assert.equal(
      extractLinks('<template><link rel=canonical href="/t"></template>', PAGE).canonicalUrl,
      null,
    );
    assert.equal(extractLinks('<link rel=canonical href="javascript:x()">', PAGE).canonicalUrl, null);
    assert.equal(extractLinks('<link rel=canonical>', PAGE).canonicalUrl, null);
  });

  test('a canonical in a GBK page has its query encoded in GBK', () => {
    const html = '<link rel="canonical" href="/文章?标题=中文">';
    assert.equal(
      extractLinks(html, PAGE, { encoding: 'GBK' }).canonicalUrl,
      'https://site.example/%E6%96%87%E7%AB%A0?%B1%EA%CC%E2=%D6%D0%CE%C4',
    );
  });
});

describe('<meta http-equiv=refresh>', () => {
  test('the target is a followed link at its place in the document, and recorded', () => {
    const html = `<a href="/before">b</a><meta http-equiv="Refresh" content="0; URL='/moved?x=1'"><a href="/after">a</a>`;
    const result = extractLinks(html, PAGE);
    assert.deepEqual(result.links.map(short), ['/before', '/moved?x=1', '/after']);
    assert.deepEqual(result.follow, result.links);
    assert.equal(result.refreshUrl, 'https://site.example/moved?x=1');
  });

  test('a refresh without a URL reloads the page itself: no link', () => {
    const result = extractLinks('<meta http-equiv="refresh" content="30">', PAGE);
    assert.deepEqual(result.links, []);
    assert.equal(result.refreshUrl, null);
  });

  test('a robots nofollow page does not follow its refresh either, but records it', () => {
    const html = '<meta name="robots" content="nofollow"><meta http-equiv="refresh" content="0;url=/next">';
    const result = extractLinks(html, PAGE);
    assert.deepEqual(result.links.map(short), ['/next']);
    assert.deepEqual(result.follow, []);
  });

  test('content parsing follows the HTML standard', () => {
    const cases: [string, string | null][] = [
      ['0; url=/a', '/a'],
      ['0;URL=/a', '/a'],
      ['5 , url = "/a b" trailing', '/a b'],
      ["0; url='/a'", '/a'],
      ['0; /direct', '/direct'],
      ['1.5; url=/a', '/a'],
      ['.5;url=/a', '/a'],
      ['0, https://x.example/', 'https://x.example/'],
      ['0; urx=/a', 'urx=/a'],
      ['0', null],
      ['', null],
      ['x; url=/a', null],
      ['0x; url=/a', null],
      ['0;  ', null],
    ];
    for (const [content, expected] of cases) assert.equal(refreshTarget(content), expected, content);
  });
});

describe('XHTML', () => {
  const xhtml = `<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title/><script src="/app.js"/>
<style type="text/css"/></head><body>
<p><![CDATA[ <a href="/in-cdata">not a link</a> ]]></p>
<a href="/one">1</a><br/><a href="/two"/></body></html>`;

  test('self-closing script, style and title are empty elements, CDATA is text', () => {
    assert.deepEqual(extractLinks(xhtml, PAGE, { xml: true }).links.map(short), ['/one', '/two']);
  });

  test('read as HTML the same bytes would lose links after <title/> (why XHTML is read as XML)', () => {
    assert.deepEqual(extractLinks(xhtml, PAGE).links, []);
  });
});

describe('soft limits', () => {
  test('links longer than maxUrlLength (normalised) are dropped and counted once each', () => {
    const long = `/${'a'.repeat(100)}`;
    const html = `<a href="${long}">1</a><a href="/short">2</a><a href="${long}#x">3</a><a href="/${'b'.repeat(9000)}">4</a>`;
    const result = extractLinks(html, PAGE, { maxUrlLength: 100 });
    assert.deepEqual(result.links.map(short), ['/short']);
    assert.deepEqual(result.dropped, { tooLong: 2, overLimit: 0 });
    // The limit counts the whole URL: 'https://site.example' + 101 characters.
    assert.equal(extractLinks(html, PAGE, { maxUrlLength: 121 }).links.length, 2);
  });

  test('the first maxLinks distinct links are kept; the rest are counted', () => {
    let html = '';
    for (let i = 0; i < 10; i++) html += `<a href="/p${i}">x</a><a href="/p${i}">again</a>`;
    const result = extractLinks(html, PAGE, { maxLinks: 4 });
    assert.deepEqual(result.links.map(short), ['/p0', '/p1', '/p2', '/p3']);
    assert.deepEqual(result.follow, result.links);
    assert.deepEqual(result.dropped, { tooLong: 0, overLimit: 6 });
  });

  test('a kept link first seen as nofollow becomes followed by a later plain occurrence', () => {
    const html = '<a rel="nofollow" href="/a">1</a><a href="/b">2</a><a href="/c">3</a><a href="/a">4</a>';
    const result = extractLinks(html, PAGE, { maxLinks: 2 });
    assert.deepEqual(result.links.map(short), ['/a', '/b']);
    assert.deepEqual(result.follow.map(short), ['/a', '/b']);
    assert.deepEqual(result.dropped, { tooLong: 0, overLimit: 1 });
  });

  test('defaults: 2,048 characters and 5,000 links', () => {
    let html = `<a href="/${'x'.repeat(2100)}">long</a>`;
    for (let i = 0; i < 5003; i++) html += `<a href="/p${i}">x</a>`;
    const result = extractLinks(html, PAGE);
    assert.equal(result.links.length, 5000);
    assert.deepEqual(result.dropped, { tooLong: 1, overLimit: 3 });
  });
});
