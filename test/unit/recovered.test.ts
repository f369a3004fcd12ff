import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readRecovered } from '../../scheduler/outcomes/recovered.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';

const rec = (key: string, page: unknown): SinkRecord => ({ key, value: Buffer.from(JSON.stringify(page)) });

describe('readRecovered', () => {
  test('an ok record gives its followable links: nofollow links left out', () => {
    const found = readRecovered([
      rec('https://a.test/', {
        outcome: 'ok',
        links: ['https://a.test/1', 'https://a.test/2', 'https://a.test/3'],
        nofollowLinks: ['https://a.test/2'],
        nofollow: false,
        error: null,
      }),
    ]);
    assert.deepEqual(Object.fromEntries(found), {
      'https://a.test/': { outcome: 'ok', follow: ['https://a.test/1', 'https://a.test/3'], error: '' },
    });
  });

  test('a not-modified record stays not-modified (its links come from the recrawl index), never a failure', () => {
    const found = readRecovered([
      rec('https://a.test/', {
        outcome: 'not-modified',
        links: [],
        nofollowLinks: [],
        nofollow: false,
        error: null,
        previousCaptureId: 'c1',
      }),
    ]);
    assert.deepEqual(found.get('https://a.test/'), { outcome: 'not-modified', follow: [], error: '' });
  });

  test('a page with meta robots nofollow follows nothing', () => {
    const found = readRecovered([
      rec('https://a.test/', {
        outcome: 'ok',
        links: ['https://a.test/1'],
        nofollowLinks: [],
        nofollow: true,
      }),
    ]);
    assert.deepEqual(found.get('https://a.test/')?.follow, []);
  });

  test('a failed record carries its error as "CODE: message"', () => {
    const found = readRecovered([
      rec('https://a.test/x', {
        outcome: 'failed',
        links: [],
        error: { code: 'HTTP_404', message: 'HTTP 404' },
      }),
    ]);
    assert.deepEqual(found.get('https://a.test/x'), {
      outcome: 'failed',
      follow: [],
      error: 'HTTP_404: HTTP 404',
    });
  });

  test('records are keyed by the sink key; non-string links are ignored', () => {
    const found = readRecovered([
      rec('https://a.test/1', { outcome: 'ok', links: ['https://a.test/2', 42, null] }),
      rec('https://b.test/1', { outcome: 'ok' }),
    ]);
    assert.deepEqual([...found.keys()], ['https://a.test/1', 'https://b.test/1']);
    assert.deepEqual(found.get('https://a.test/1')?.follow, ['https://a.test/2']);
    assert.deepEqual(found.get('https://b.test/1')?.follow, []);
  });

  test('an unreadable record is skipped (its task is fetched again); the others still count', () => {
    const found = readRecovered([
      { key: 'https://a.test/torn', value: Buffer.from('{"outcome":"ok","li') },
      { key: 'https://a.test/null', value: Buffer.from('null') },
      rec('https://a.test/fine', { outcome: 'ok', links: [] }),
    ]);
    assert.deepEqual([...found.keys()], ['https://a.test/fine']);
  });

  test('an outcome other than ok counts as failed, so it is never mistaken for a page', () => {
    const found = readRecovered([rec('https://a.test/', { outcome: 'weird', links: ['https://a.test/1'] })]);
    assert.equal(found.get('https://a.test/')?.outcome, 'failed');
  });

  test('a record whose link lists are in the blob store is skipped: settled without them, its links would be lost', () => {
    const found = readRecovered([
      rec('https://a.test/sitemap.xml', {
        outcome: 'ok',
        links: null,
        nofollowLinks: null,
        linksRef: { key: 'bodies/sha256/ab/cd/abcd', links: 50_000, nofollowLinks: 0 },
      }),
      rec('https://a.test/moved', { outcome: 'ok', links: null, nofollowLinks: null }),
      rec('https://a.test/inline', { outcome: 'ok', links: ['https://a.test/1'], nofollowLinks: [] }),
    ]);
    assert.deepEqual([...found.keys()], ['https://a.test/inline']);
  });

  test('nothing to recover: an empty map', () => {
    assert.equal(readRecovered([]).size, 0);
  });
});
