import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  essenceOf,
  isHtmlMediaType,
  isTextualMediaType,
  mediaTypeOf,
  sniffMediaType,
} from '../../shared/text/media-type.js';

const bytes = (...values: number[]): Buffer => Buffer.from(values);

test('essenceOf: lower-case type/subtype without parameters; junk is null', () => {
  assert.equal(essenceOf('Text/HTML; charset=GBK'), 'text/html');
  assert.equal(essenceOf(' application/xhtml+xml '), 'application/xhtml+xml');
  assert.equal(essenceOf('html'), null);
  assert.equal(essenceOf(''), null);
  assert.equal(essenceOf(null), null);
});

test('a declared type is kept, even when the body looks like something else', () => {
  const page = Buffer.from('<html><a href="/x">x</a></html>');
  assert.deepEqual(mediaTypeOf('text/plain', page), { essence: 'text/plain', sniffed: false });
  assert.deepEqual(mediaTypeOf('application/octet-stream', page), {
    essence: 'application/octet-stream',
    sniffed: false,
  });
});

test('a missing or unknown type is sniffed', () => {
  const page = Buffer.from('<html><a href="/x">x</a></html>');
  for (const header of [null, 'unknown/unknown', 'application/unknown', '*/*', 'garbage']) {
    assert.deepEqual(mediaTypeOf(header, page), { essence: 'text/html', sniffed: true }, String(header));
  }
});

test('HTML is recognised by its first tag after whitespace (or a UTF-8 BOM), any case', () => {
  for (const start of [
    '<!DOCTYPE html>',
    '  \n<html lang="zh">',
    '<HEAD>',
    '<body>',
    '<p>',
    '<a href="/">',
    '<!-- comment -->',
    '<script>',
    '<TITLE>',
    '\ufeff<html>',
  ]) {
    assert.equal(sniffMediaType(Buffer.from(`${start}rest`)), 'text/html', start);
  }
  // A tag name must end there: <pre> and <applet> are not in the list, <abbr> is not <a>.
  assert.equal(sniffMediaType(Buffer.from('<abbr>x</abbr>')), 'text/plain');
  assert.equal(sniffMediaType(Buffer.from('<?xml version="1.0"?><feed/>')), 'text/xml');
});

test('binary signatures: PDF, images, archives', () => {
  assert.equal(sniffMediaType(Buffer.from('%PDF-1.7\n<a href="/x">')), 'application/pdf');
  assert.equal(sniffMediaType(bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0)), 'image/png');
  assert.equal(sniffMediaType(Buffer.from('GIF89a\u0001\u0000')), 'image/gif');
  assert.equal(sniffMediaType(bytes(0xff, 0xd8, 0xff, 0xe0)), 'image/jpeg');
  assert.equal(sniffMediaType(Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 ')), 'image/webp');
  assert.equal(sniffMediaType(bytes(0x1f, 0x8b, 0x08, 0)), 'application/x-gzip');
  assert.equal(sniffMediaType(bytes(0x50, 0x4b, 0x03, 0x04)), 'application/zip');
});

test('otherwise text unless a binary control byte appears early', () => {
  assert.equal(sniffMediaType(Buffer.from('{"json": true}')), 'text/plain');
  assert.equal(sniffMediaType(Buffer.from('中文 plain text')), 'text/plain');
  assert.equal(sniffMediaType(Buffer.alloc(0)), 'text/plain');
  assert.equal(sniffMediaType(bytes(0x41, 0x00, 0x42)), 'application/octet-stream');
  assert.equal(sniffMediaType(bytes(0xfe, 0xff, 0x00, 0x3c)), 'text/plain'); // UTF-16BE BOM
});

test('which types are parsed for links and which are stored as text', () => {
  assert.ok(isHtmlMediaType('text/html'));
  assert.ok(isHtmlMediaType('application/xhtml+xml'));
  for (const type of [
    'application/json',
    'application/pdf',
    'image/svg+xml',
    'text/plain',
    'application/xml',
  ]) {
    assert.ok(!isHtmlMediaType(type), type);
  }
  for (const type of [
    'text/css',
    'application/json',
    'application/ld+json',
    'image/svg+xml',
    'application/rss+xml',
  ]) {
    assert.ok(isTextualMediaType(type), type);
  }
  for (const type of ['application/pdf', 'image/png', 'application/octet-stream', 'application/zip']) {
    assert.ok(!isTextualMediaType(type), type);
  }
});
