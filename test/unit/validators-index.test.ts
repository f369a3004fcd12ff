import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { ValidatorsIndex, type CaptureUpdate } from '../../scheduler/recrawl/validators-index.js';

const ok = (url: string, captureId: string, more: Partial<CaptureUpdate> = {}): CaptureUpdate => ({
  jobId: 'job',
  runId: 'run-1',
  url,
  kind: 'ok',
  captureId,
  validators: { etag: `"${captureId}"`, lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT' },
  links: [`${url}/child`],
  ...more,
});

describe('ValidatorsIndex', () => {
  let dir: string;
  let now = 1_000;
  const open = (more: { maxEntries?: number; maxLinksBytes?: number } = {}) =>
    new ValidatorsIndex({ path: join(dir, 'index.sqlite'), clock: () => now, ...more });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'validators-index-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('keeps the last capture per job and URL, across a reopen', () => {
    const index = open();
    index.record([ok('https://a.test/1', 'c1'), ok('https://a.test/2', 'c2', { jobId: 'other' })]);
    index.record([ok('https://a.test/1', 'c3')]);
    index.close();
    const reopened = open();
    assert.deepEqual(reopened.lookup('job', 'https://a.test/1'), {
      validators: { captureId: 'c3', etag: '"c3"', lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT' },
      links: ['https://a.test/1/child'],
    });
    assert.equal(reopened.lookup('job', 'https://a.test/2'), null, 'another job’s capture is not this one’s');
    assert.equal(reopened.lookup('other', 'https://a.test/2')?.validators.captureId, 'c2');
    reopened.close();
  });

  test('every job with captures is found after a reopen, and a job gets lookups from its first capture', () => {
    const index = open();
    assert.equal(index.lookup('b', 'https://a.test/1'), null);
    index.record([ok('https://a.test/1', 'c1', { jobId: 'b' })]);
    assert.equal(index.lookup('b', 'https://a.test/1')?.validators.captureId, 'c1');
    index.record(['a', 'c', 'b-2', 'zz'].map((jobId, i) => ok('https://a.test/1', `d${i}`, { jobId })));
    index.close();
    const reopened = open();
    for (const [jobId, captureId] of [
      ['a', 'd0'],
      ['b', 'c1'],
      ['b-2', 'd2'],
      ['c', 'd1'],
      ['zz', 'd3'],
    ]) {
      assert.equal(reopened.lookup(jobId!, 'https://a.test/1')?.validators.captureId, captureId, jobId);
    }
    assert.equal(reopened.lookup('d', 'https://a.test/1'), null);
    reopened.close();
  });

  test('a job found without captures is asked for again 10 s later: captures another process wrote then count', () => {
    const reader = open();
    const writer = open();
    assert.equal(reader.lookup('j', 'https://a.test/1'), null);
    writer.record([ok('https://a.test/1', 'c1', { jobId: 'j' })]);
    now += 10_000;
    assert.equal(reader.lookup('j', 'https://a.test/1')?.validators.captureId, 'c1');
    writer.close();
    reader.close();
  });

  test('a page without validators, or with links too large to keep, is not kept', () => {
    const index = open({ maxLinksBytes: 100 });
    index.record([
      ok('https://a.test/none', 'c1', { validators: undefined }),
      ok('https://a.test/big', 'c2', { links: ['x'.repeat(200)] }),
    ]);
    assert.equal(index.lookup('job', 'https://a.test/none'), null);
    assert.equal(index.lookup('job', 'https://a.test/big'), null);
    index.close();
  });

  test('a not-modified page keeps the confirmed capture and its links, takes new validators, and is counted per run', () => {
    const index = open();
    index.record([ok('https://a.test/1', 'c1'), ok('https://a.test/2', 'c2')]);
    index.record([
      ok('https://a.test/1', 'c9', {
        kind: 'not-modified',
        runId: 'run-2',
        validators: { etag: '"new"' },
        links: [],
      }),
      ok('https://a.test/2', 'c8', {
        kind: 'not-modified',
        runId: 'run-2',
        validators: undefined,
        links: [],
      }),
    ]);
    const one = index.lookup('job', 'https://a.test/1');
    assert.equal(one?.validators.captureId, 'c1');
    assert.equal(one?.validators.etag, '"new"');
    assert.equal(one?.validators.lastModified, 'Thu, 01 Jan 2026 00:00:00 GMT');
    assert.deepEqual(one?.links, ['https://a.test/1/child']);
    assert.equal(index.lookup('job', 'https://a.test/2')?.validators.etag, '"c2"');
    assert.equal(index.notModified('run-2'), 2);
    assert.equal(index.notModified('run-1'), 0);
    index.close();
    const reopened = open();
    assert.equal(reopened.notModified('run-2'), 2, 'the count is durable');
    reopened.close();
  });

  test('stays within maxEntries, dropping the least recently settled first', () => {
    const index = open({ maxEntries: 10 });
    for (let i = 0; i < 30; i++) {
      now += 1;
      index.record([ok(`https://a.test/${i}`, `c${i}`)]);
    }
    const kept = Array.from({ length: 30 }, (_, i) => index.lookup('job', `https://a.test/${i}`) !== null);
    assert.ok(kept.filter(Boolean).length <= 10, `${kept.filter(Boolean).length} kept`);
    assert.equal(kept[29], true, 'the newest is kept');
    assert.equal(kept[0], false, 'the oldest is gone');
    index.close();
  });
});
