import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer, type html, type Token } from 'parse5';
import { SAXParser } from 'parse5-sax-parser';
import { scanTags, type TagVisitor } from '../../client/crawler/parse/tag-scanner.js';
// A seeded PRNG, so a failure names a reproducible seed.
import { mulberry32 } from '../../scripts/site/prng.js';

/**
 * `scanTags` uses `TextSkippingTokenizer`, which jumps over text inside parse5's tokenizer. These tests
 * compare its tag stream with parse5's unmodified tokenizer (driven by the same feedback) and with
 * parse5-sax-parser, over hand-written documents and seeded random ones, so that an upgrade of parse5
 * that changes the internals it relies on fails here rather than in production.
 */

const NAMESPACE_NAMES: Record<string, string> = {
  'http://www.w3.org/1999/xhtml': 'html',
  'http://www.w3.org/2000/svg': 'svg',
  'http://www.w3.org/1998/Math/MathML': 'math',
};

/** `<name attr="value"/>`, as both parse5 and parse5-sax-parser tokens can be described. */
function describeStartTag(token: Pick<Token.TagToken, 'tagName' | 'attrs' | 'selfClosing'>): string {
  const attrs = token.attrs
    .map((a) => ` ${a.prefix === undefined ? '' : `${a.prefix}:`}${a.name}=${JSON.stringify(a.value)}`)
    .join('');
  return `<${token.tagName}${attrs}${token.selfClosing ? '/' : ''}>`;
}

/** Start tags are followed by ` @namespace`, which `withoutNamespace` removes. */
function tagsWith(source: string, options: Parameters<typeof scanTags>[2]): string[] {
  const tags: string[] = [];
  const visitor: TagVisitor = {
    startTag(token: Token.TagToken, namespace: html.NS) {
      tags.push(`${describeStartTag(token)} @${NAMESPACE_NAMES[namespace] ?? namespace}`);
    },
    endTag(token: Token.TagToken) {
      tags.push(`</${token.tagName}>`);
    },
  };
  scanTags(source, visitor, options);
  return tags;
}

function fastTags(source: string, scripting = true): string[] {
  return tagsWith(source, { scripting });
}

function referenceTags(source: string, scripting = true): string[] {
  return tagsWith(source, { scripting, createTokenizer: (handler) => new Tokenizer({}, handler) });
}

/** parse5-sax-parser's start and end tags (it always tokenises as with scripting enabled). */
function saxTags(source: string): string[] {
  const tags: string[] = [];
  const parser = new SAXParser();
  parser.on('startTag', (token) => tags.push(describeStartTag(token)));
  parser.on('endTag', (token) => tags.push(`</${token.tagName}>`));
  parser.end(source);
  return tags;
}

function withoutNamespace(tags: string[]): string[] {
  return tags.map((tag) => tag.replace(/ @\w+$/, ''));
}

const DOCUMENTS = [
  '',
  'text only',
  '<!doctype html><html><head><title>A &amp; B <b></title></head><body><p class=x>Hi</p></body></html>',
  '<a href="/a?x=1&amp;y=2" REL=NoFollow>x</a><AREA HREF=b><a href=\'c\'>',
  '<script>if (a < b && c > d) document.write("<a href=x></a>")</script><a href=after>',
  '<script><!-- <script> </script> --> <a href=inside> </script><a href=after>',
  '<style>a{}</style><textarea><a></textarea><xmp><b></xmp><iframe><i></iframe><noembed><u></noembed>',
  '<noscript><a href=ns></noscript><noframes><a></noframes>',
  '<!-- <a href=c> --><!--><!---><!-- -- --!><a href=d><!',
  '<svg><a xlink:href=x><foreignObject><p><a href=y></foreignObject><![CDATA[<a>]]><style><a></style></svg>',
  '<math><mi><a></a></mi><annotation-xml encoding="text/html"><a href=z></annotation-xml></math>',
  '<svg><p>exit foreign<svg><circle/></svg></svg>',
  '<a href="/one">1<a href="/two">< a> 1 < 2 <<a href=three></b><a href=four <a href=five>',
  '<a\r\nhref="/crlf\r\n"\r>x</a>\r\n\r\n<p>\r',
  '<a\0href=nul>\0<b>\0</b>',
  '😀<a href="😀">😀</a>\ud800<b>\udc00</b>',
  '<plaintext><a href=x></plaintext>',
  '<title>unclosed title <a href=x>',
  '<a href="unterminated',
  '&amp;&lt;&#x3C;a href=x&gt;<a href=&quot;q&quot;>',
];

test('the text-skipping tokenizer emits the same tags as parse5’s own tokenizer', () => {
  for (const source of DOCUMENTS) {
    assert.deepEqual(fastTags(source), referenceTags(source), source);
    assert.deepEqual(fastTags(source, false), referenceTags(source, false), source);
  }
});

test('with scripting enabled, scanTags emits the same tags as parse5-sax-parser', () => {
  for (const source of DOCUMENTS) {
    assert.deepEqual(withoutNamespace(fastTags(source)), saxTags(source), source);
  }
});

test('with scripting disabled, noscript content is markup', () => {
  const source = '<noscript><a href=x></a></noscript>';
  assert.deepEqual(withoutNamespace(fastTags(source, true)), ['<noscript>', '</noscript>']);
  assert.deepEqual(withoutNamespace(fastTags(source, false)), [
    '<noscript>',
    '<a href="x">',
    '</a>',
    '</noscript>',
  ]);
});

test('namespaces: SVG and MathML elements, HTML again at integration points and after exits', () => {
  const tags = fastTags('<svg><a href=x></a><foreignObject><a href=y></a></foreignObject></svg><a href=z>');
  assert.deepEqual(tags, [
    '<svg> @svg',
    '<a href="x"> @svg',
    '</a>',
    '<foreignObject> @svg',
    '<a href="y"> @html',
    '</a>',
    '</foreignObject>',
    '</svg>',
    '<a href="z"> @html',
  ]);
});

const FRAGMENTS = [
  'text ',
  'more text\n',
  '\r\n',
  '\r',
  '\0',
  '😀',
  '\ud800',
  '&amp;',
  '&',
  '&#x41;',
  '<',
  '>',
  '< ',
  '</',
  '<a href="/x">',
  '<a href=y rel=nofollow>',
  "<A HREF='/z'>",
  '</a>',
  '<area href=q>',
  '<base href="/b/">',
  '<meta name=robots content=nofollow>',
  '<p>',
  '</p>',
  '<div class="c">',
  '</div>',
  '<br/>',
  '<script>',
  '</script>',
  '<!--',
  '-->',
  '--!>',
  '<!-',
  '<!doctype html>',
  '<title>',
  '</title>',
  '<textarea>',
  '</textarea>',
  '<style>',
  '</style>',
  '<noscript>',
  '</noscript>',
  '<template>',
  '</template>',
  '<svg>',
  '</svg>',
  '<math>',
  '</math>',
  '<foreignObject>',
  '</foreignObject>',
  '<![CDATA[',
  ']]>',
  '<iframe>',
  '</iframe>',
  '<xmp>',
  '</xmp>',
  '<plaintext>',
  '"',
  "'",
  '=',
  '<a href="',
  '<a href=',
  ' x=1 ',
  '/>',
  '<script><!--',
  '<script>',
  '</scr',
  'ipt>',
  '<\n',
  '<?php ?>',
  '<b',
  '\t',
  '\f',
];

test('random tag soup: scanTags matches parse5’s own tokenizer and parse5-sax-parser', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const next = mulberry32(seed);
    const parts: string[] = [];
    const length = 1 + Math.floor(next() * 60);
    for (let i = 0; i < length; i++) parts.push(FRAGMENTS[Math.floor(next() * FRAGMENTS.length)] ?? '');
    const source = parts.join('');
    assert.deepEqual(fastTags(source), referenceTags(source), `seed ${seed}: ${JSON.stringify(source)}`);
    assert.deepEqual(fastTags(source, false), referenceTags(source, false), `seed ${seed} (no scripting)`);
    assert.deepEqual(withoutNamespace(fastTags(source)), saxTags(source), `seed ${seed} (parse5-sax-parser)`);
  }
});
