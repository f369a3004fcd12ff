import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { decode, encodeBody } from '../../shared/text/body-encoding.js';
import { detectCharset } from '../../shared/text/charset.js';
import { defaultCharsetSchema } from '../../shared/protocol/charset-label.js';

/** Text that each of these encodings can represent, with something that is not ASCII. */
const SAMPLES: readonly { name: string; iconvName: string; text: string }[] = [
  { name: 'GBK', iconvName: 'gbk', text: '中文网页：简体字，链接与测试' },
  { name: 'gb18030', iconvName: 'gb18030', text: '中文网页 𠀀 and ₠ (four-byte sequences)' },
  { name: 'Big5', iconvName: 'big5', text: '繁體中文網頁，連結與測試' },
  { name: 'Shift_JIS', iconvName: 'shift_jis', text: '日本語のページ、リンクとテスト' },
  { name: 'EUC-KR', iconvName: 'euc-kr', text: '한국어 웹 페이지와 링크' },
  { name: 'windows-1251', iconvName: 'win1251', text: 'Привет, мир: русская страница' },
];

const html = (head: string, body: string): string =>
  `<!doctype html><html><head>${head}<title>t</title></head><body><p>${body}</p></body></html>`;

const htmlType = { markup: true };

describe('legacy charsets, decoded from real encoded bytes', () => {
  for (const { name, iconvName, text } of SAMPLES) {
    test(`${name} from the Content-Type header`, () => {
      const bytes = iconv.encode(html('', text), iconvName);
      assert.ok(!bytes.equals(Buffer.from(html('', text))), 'the sample must not be UTF-8 bytes');
      const encoded = encodeBody(bytes, `text/html; charset=${name}`);
      assert.deepEqual(encoded.charset, { name, source: 'header' });
      assert.equal(encoded.encoding, 'utf8');
      assert.equal(encoded.body, html('', text));
    });

    test(`${name} from <meta charset>, with no charset in the header`, () => {
      const page = html(`<meta charset="${name.toLowerCase()}">`, text);
      const encoded = encodeBody(iconv.encode(page, iconvName), 'text/html');
      assert.deepEqual(encoded.charset, { name, source: 'meta' });
      assert.equal(encoded.body, page);
    });
  }

  test('<meta http-equiv=Content-Type content="...; charset=..."> in any case and quoting', () => {
    const page = html(`<META HTTP-EQUIV=content-type CONTENT='text/html; Charset=GB2312'>`, '简体中文');
    const encoded = encodeBody(iconv.encode(page, 'gbk'), null);
    assert.deepEqual(encoded.charset, { name: 'GBK', source: 'meta' });
    assert.equal(encoded.body, page);
  });

  test('a meta content charset without http-equiv=content-type does not count', () => {
    const page = html(`<meta name="x" content="text/html; charset=gbk">`, 'abc');
    assert.equal(detectCharset(Buffer.from(page), null, htmlType).source, 'default');
  });

  test('labels map to names the WHATWG way', () => {
    const cases: [string, string][] = [
      ['gb2312', 'GBK'],
      ['x-gbk', 'GBK'],
      ['chinese', 'GBK'],
      ['GB18030', 'gb18030'],
      ['big5-hkscs', 'Big5'],
      ['x-sjis', 'Shift_JIS'],
      ['ms932', 'Shift_JIS'],
      ['ks_c_5601-1987', 'EUC-KR'],
      ['cp1251', 'windows-1251'],
      ['iso-8859-1', 'windows-1252'],
      ['latin1', 'windows-1252'],
      ['ascii', 'windows-1252'],
      ['utf8', 'UTF-8'],
    ];
    for (const [label, name] of cases) {
      assert.deepEqual(detectCharset(Buffer.from('x'), `text/html; charset="${label}"`, htmlType), {
        name,
        source: 'header',
      });
    }
  });

  test('a GBK-labelled page decodes four-byte GB18030 sequences, as the standard says', () => {
    const bytes = iconv.encode('<p>𠀀</p>', 'gb18030');
    assert.equal(encodeBody(bytes, 'text/html; charset=gbk').body, '<p>𠀀</p>');
  });
});

describe('where the charset comes from: BOM, then header, then meta, then a default', () => {
  test('a UTF-8 BOM wins over the header and the meta, and is not part of the text', () => {
    const page = html('<meta charset="gbk">', '中文');
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page)]);
    const encoded = encodeBody(bytes, 'text/html; charset=windows-1251');
    assert.deepEqual(encoded.charset, { name: 'UTF-8', source: 'bom' });
    assert.equal(encoded.body, page);
  });

  test('UTF-16LE and UTF-16BE byte order marks', () => {
    const page = html('', '中文 and Ελληνικά');
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    for (const [bytes, name] of [
      [le, 'UTF-16LE'],
      [be, 'UTF-16BE'],
    ] as const) {
      const encoded = encodeBody(bytes, 'text/html; charset=gbk');
      assert.deepEqual(encoded.charset, { name, source: 'bom' });
      assert.equal(encoded.body, page);
    }
  });

  test('the header wins over a meta that says otherwise', () => {
    const page = html('<meta charset="shift_jis">', 'Привет');
    const encoded = encodeBody(iconv.encode(page, 'win1251'), 'text/html; charset=windows-1251');
    assert.deepEqual(encoded.charset, { name: 'windows-1251', source: 'header' });
    assert.equal(encoded.body, page);
  });

  test('an unknown header label is ignored and the meta decides', () => {
    const page = html('<meta charset="euc-kr">', '한국어');
    const encoded = encodeBody(iconv.encode(page, 'euc-kr'), 'text/html; charset=no-such-charset');
    assert.deepEqual(encoded.charset, { name: 'EUC-KR', source: 'meta' });
    assert.equal(encoded.body, page);
  });

  test('the prescan reads only the first 1024 bytes, skips comments, and takes the first meta', () => {
    const late = `<!doctype html><html><head>${' '.repeat(1100)}<meta charset="gbk"></head></html>`;
    assert.equal(detectCharset(Buffer.from(late), null, htmlType).source, 'default');
    const commented = '<!-- <meta charset="big5"> --><meta charset="euc-kr"><meta charset="gbk">';
    assert.deepEqual(detectCharset(Buffer.from(commented), null, htmlType), {
      name: 'EUC-KR',
      source: 'meta',
    });
  });

  test('a meta that says UTF-16 means UTF-8 (its bytes were ASCII-compatible), as the standard says', () => {
    assert.deepEqual(detectCharset(Buffer.from('<meta charset="utf-16">é'), null, htmlType), {
      name: 'UTF-8',
      source: 'meta',
    });
  });

  test('an XML declaration gives the encoding of XHTML and XML', () => {
    const page =
      '<?xml version="1.0" encoding="Shift_JIS"?><html xmlns="http://www.w3.org/1999/xhtml"><p>日本語</p></html>';
    const encoded = encodeBody(iconv.encode(page, 'shift_jis'), 'application/xhtml+xml');
    assert.deepEqual(encoded.charset, { name: 'Shift_JIS', source: 'xml' });
    assert.equal(encoded.body, page);
  });

  test('with nothing declared: UTF-8 when the bytes are valid UTF-8, else windows-1252', () => {
    const utf8 = encodeBody(Buffer.from(html('', '中文 café')), 'text/html');
    assert.deepEqual(utf8.charset, { name: 'UTF-8', source: 'default' });
    assert.equal(utf8.body, html('', '中文 café'));
    const legacy = encodeBody(Buffer.from([0x3c, 0x70, 0x3e, 0x63, 0x61, 0x66, 0xe9]), 'text/html');
    assert.deepEqual(legacy.charset, { name: 'windows-1252', source: 'default' });
    assert.equal(legacy.body, '<p>café');
  });

  test('non-markup text (plain, CSS, JSON) never reads a meta, only BOM and header', () => {
    const text = '<meta charset="gbk"> 中文';
    assert.deepEqual(encodeBody(Buffer.from(text), 'text/plain').charset, {
      name: 'UTF-8',
      source: 'default',
    });
    assert.deepEqual(encodeBody(iconv.encode(text, 'gbk'), 'text/plain; charset=gbk'), {
      body: text,
      encoding: 'utf8',
      charset: { name: 'GBK', source: 'header' },
    });
    const json = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"中"}')]);
    assert.deepEqual(encodeBody(json, 'application/json'), {
      body: '{"a":"中"}',
      encoding: 'utf8',
      charset: { name: 'UTF-8', source: 'bom' },
    });
  });

  test('invalid sequences become U+FFFD rather than failing the page', () => {
    assert.equal(decode(Buffer.from([0x61, 0xff, 0x62]), 'UTF-8'), 'a\ufffdb');
    assert.equal(decode(Buffer.from([0x61, 0x81, 0x20, 0x62]), 'GBK'), 'a\ufffd b');
  });
});

describe("the crawl's default charset, for pages that name none", () => {
  const text = '<html><body><p>这是一个没有声明编码的中文页面</p></body></html>';
  const gbk = iconv.encode(text, 'gbk');

  test('unlabelled bytes that are not UTF-8 decode with the crawl default instead of windows-1252', () => {
    assert.deepEqual(detectCharset(gbk, 'text/html', { markup: true }), {
      name: 'windows-1252',
      source: 'default',
    });
    assert.deepEqual(detectCharset(gbk, 'text/html', { markup: true, fallback: 'GBK' }), {
      name: 'GBK',
      source: 'default',
    });
    const encoded = encodeBody(gbk, 'text/html', 'text/html', 'GBK');
    assert.equal(encoded.body, text);
    assert.equal(encoded.charset?.name, 'GBK');
  });

  test('valid UTF-8 and any declared charset still win over the default', () => {
    const utf8 = Buffer.from(text, 'utf8');
    assert.equal(detectCharset(utf8, 'text/html', { markup: true, fallback: 'GBK' }).name, 'UTF-8');
    const big5 = iconv.encode('<p>中文</p>', 'big5');
    assert.equal(
      detectCharset(big5, 'text/html; charset=big5', { markup: true, fallback: 'GBK' }).name,
      'Big5',
    );
  });

  test('the setting takes WHATWG labels and refuses what a page cannot default to', () => {
    assert.equal(defaultCharsetSchema.parse('gb2312'), 'GBK');
    assert.equal(defaultCharsetSchema.parse(' Shift_JIS '), 'Shift_JIS');
    assert.equal(defaultCharsetSchema.safeParse('klingon').success, false);
    assert.equal(defaultCharsetSchema.safeParse('utf-16le').success, false);
    assert.equal(defaultCharsetSchema.safeParse('iso-2022-kr').success, false);
  });
});
