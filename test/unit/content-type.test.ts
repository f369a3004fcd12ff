import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isHtmlContentType } from '../../client/crawler/parse/content-type.js';

test('HTML and XHTML media types, with parameters, any case and spacing', () => {
  for (const value of [
    'text/html',
    'text/html; charset=utf-8',
    'TEXT/HTML;charset=ISO-8859-1',
    '  text/html  ',
    'text/html ; charset="utf-8"',
    'application/xhtml+xml',
    'Application/XHTML+XML; charset=utf-8',
  ]) {
    assert.equal(isHtmlContentType(value), true, value);
  }
});

test('anything else, a missing header or an empty one is not HTML', () => {
  for (const value of [
    null,
    undefined,
    '',
    ';',
    'text/plain',
    'text/htmlx',
    'text/html-sandboxed',
    'xtext/html',
    'application/json',
    'application/xml',
    'image/svg+xml',
    'text/xml',
    'text / html',
    'application/octet-stream',
  ]) {
    assert.equal(isHtmlContentType(value), false, String(value));
  }
});
