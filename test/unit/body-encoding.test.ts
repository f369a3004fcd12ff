import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { charsetOf, encodeBody } from '../../shared/text/body-encoding.js';

describe('charsetOf', () => {
  test('reads the charset parameter, quoted or not, lower-cased', () => {
    assert.equal(charsetOf('text/html; charset=UTF-8'), 'utf-8');
    assert.equal(charsetOf('text/html;charset="ISO-8859-1"'), 'iso-8859-1');
    assert.equal(charsetOf('text/html; Charset = windows-1251 ; q=1'), 'windows-1251');
    assert.equal(charsetOf('text/html'), null);
    assert.equal(charsetOf(null), null);
  });
});

describe('encodeBody', () => {
  test('utf-8 text stays text', () => {
    const body = Buffer.from('<p>héllo 世界</p>');
    assert.deepEqual(encodeBody(body, 'text/html; charset=utf-8'), {
      body: '<p>héllo 世界</p>',
      encoding: 'utf8',
      charset: { name: 'UTF-8', source: 'header' },
    });
    assert.deepEqual(encodeBody(body, 'text/html'), {
      body: '<p>héllo 世界</p>',
      encoding: 'utf8',
      charset: { name: 'UTF-8', source: 'default' },
    });
    assert.equal(encodeBody(Buffer.from('{"a":1}'), 'application/json').encoding, 'utf8');
    assert.equal(encodeBody(Buffer.from('<svg/>'), 'image/svg+xml').encoding, 'utf8');
    assert.equal(
      encodeBody(Buffer.from('<feed/>'), 'application/atom+xml; charset=us-ascii').encoding,
      'utf8',
    );
  });

  test('text in another declared charset is decoded to faithful text', () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]); // "café" in ISO-8859-1
    // iso-8859-1 is a WHATWG label of windows-1252.
    assert.deepEqual(encodeBody(latin1, 'text/html; charset=iso-8859-1'), {
      body: 'café',
      encoding: 'utf8',
      charset: { name: 'windows-1252', source: 'header' },
    });
    const cp1251 = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]); // "Привет"
    assert.deepEqual(encodeBody(cp1251, 'text/plain; charset=windows-1251'), {
      body: 'Привет',
      encoding: 'utf8',
      charset: { name: 'windows-1251', source: 'header' },
    });
  });

  test('an unknown charset label is ignored, as browsers ignore it: the next source decides', () => {
    const body = Buffer.from([0x80, 0x81, 0x82]);
    assert.deepEqual(encodeBody(body, 'text/html; charset=klingon-9'), {
      body: '\u20ac\u0081\u201a',
      encoding: 'utf8',
      charset: { name: 'windows-1252', source: 'default' },
    });
  });

  test('a charset with no decoder (the replacement encoding) keeps the exact bytes as base64', () => {
    const body = Buffer.from('<p>\x1b$)C\x0e!!\x0f</p>', 'latin1');
    assert.deepEqual(encodeBody(body, 'text/html; charset=iso-2022-kr'), {
      body: body.toString('base64'),
      encoding: 'base64',
      charset: null,
    });
  });

  test('binary content types are base64 and decode back to the same bytes', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
    const encoded = encodeBody(png, 'image/png');
    assert.equal(encoded.encoding, 'base64');
    assert.ok(Buffer.from(encoded.body, 'base64').equals(png));
    assert.equal(encodeBody(Buffer.from('<html>'), 'application/octet-stream').encoding, 'base64');
  });

  test('without a content type the type is sniffed: markup and plain text are text, binary is base64', () => {
    assert.deepEqual(encodeBody(Buffer.from('  <!doctype html><p>x'), null), {
      body: '  <!doctype html><p>x',
      encoding: 'utf8',
      charset: { name: 'UTF-8', source: 'default' },
    });
    assert.equal(encodeBody(Buffer.from('<html>\u0000binary'), null).encoding, 'utf8');
    assert.equal(encodeBody(Buffer.from('plain\u0000binary'), null).encoding, 'base64');
    assert.equal(encodeBody(Buffer.from('plain words'), null).encoding, 'utf8');
    assert.equal(encodeBody(Buffer.from('%PDF-1.7 text-looking'), null).encoding, 'base64');
    assert.equal(encodeBody(Buffer.alloc(0), null).encoding, 'utf8');
  });
});
