import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { waitFor } from '../helpers/wait-for.js';

const rec = (url: string, extra = ''): SinkRecord => ({
  key: url,
  value: Buffer.from(JSON.stringify({ url, outcome: 'ok', pad: extra })),
});
const urlsOf = (records: readonly SinkRecord[]): string[] => records.map((r) => r.key);
const bytes = (records: readonly SinkRecord[]): number =>
  records.reduce((sum, r) => sum + r.value.length + 1, 0);

describe('FileSink', () => {
  let dir: string;
  const sinks: FileSink[] = [];
  const open = (options: { segmentBytes?: number; gzip?: boolean } = {}): FileSink => {
    const sink = new FileSink({ dir, ...options });
    sinks.push(sink);
    return sink;
  };
  const files = (): string[] => readdirSync(dir).sort();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `file-sink-${randomUUID()}-`));
  });

  afterEach(async () => {
    for (const sink of sinks.splice(0)) await sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('write appends one JSON line per record and resolves with a checkpoint after the last', async () => {
    const sink = open();
    const first = [rec('https://a.test/1'), rec('https://a.test/2')];
    const cp1 = await sink.write(first);
    assert.equal(cp1, `1:${bytes(first)}`);
    const second = [rec('https://a.test/3')];
    const cp2 = await sink.write(second);
    assert.equal(cp2, `1:${bytes(first) + bytes(second)}`);
    assert.equal(await sink.write([]), cp2, 'an empty write returns where the sink stands');

    const text = readFileSync(join(dir, 'pages-000001.jsonl'), 'utf8');
    assert.deepEqual(text.split('\n'), [...first, ...second].map((r) => r.value.toString()).concat(''));
  });

  test('an empty write on a fresh sink has no checkpoint and creates no file', async () => {
    const sink = open();
    assert.equal(await sink.write([]), null);
    assert.deepEqual(files(), []);
  });

  test('recover(checkpoint) returns exactly the records written after it', async () => {
    const sink = open();
    const cp1 = await sink.write([rec('https://a.test/1'), rec('https://a.test/2')]);
    const cp2 = await sink.write([rec('https://a.test/3'), rec('https://a.test/4')]);

    assert.deepEqual(urlsOf(await sink.recover(cp1)), ['https://a.test/3', 'https://a.test/4']);
    assert.deepEqual(urlsOf(await sink.recover(cp2)), []);
    assert.deepEqual(urlsOf(await sink.recover(null)), [
      'https://a.test/1',
      'https://a.test/2',
      'https://a.test/3',
      'https://a.test/4',
    ]);
    const [found] = await sink.recover(cp1);
    assert.deepEqual(found?.value, rec('https://a.test/3').value, 'the record bytes as written');
  });

  test('a new sink on the same folder (a restart) recovers, then appends after the old records', async () => {
    const before = open();
    const cp = await before.write([rec('https://a.test/1')]);
    await before.write([rec('https://a.test/2')]);
    // No close: the process died.
    const after = open();
    assert.deepEqual(urlsOf(await after.recover(cp)), ['https://a.test/2']);
    const cp3 = await after.write([rec('https://a.test/3')]);
    assert.deepEqual(urlsOf(await after.recover(cp)), ['https://a.test/2', 'https://a.test/3']);
    assert.deepEqual(urlsOf(await after.recover(cp3)), []);
  });

  test('a torn last line (crash mid-write) is cut off the file, and later writes start clean', async () => {
    const first = open();
    const cp = await first.write([rec('https://a.test/1')]);
    await first.write([rec('https://a.test/2')]);
    const path = join(dir, 'pages-000001.jsonl');
    const intact = statSync(path).size;
    appendFileSync(path, '{"url":"https://a.test/torn","outcome":"o');

    const restarted = open();
    assert.deepEqual(urlsOf(await restarted.recover(cp)), ['https://a.test/2']);
    assert.equal(statSync(path).size, intact, 'the torn bytes are gone from the file');

    await restarted.write([rec('https://a.test/3')]);
    assert.deepEqual(urlsOf(await restarted.recover(null)), [
      'https://a.test/1',
      'https://a.test/2',
      'https://a.test/3',
    ]);
  });

  test('rotates to a new segment once one reaches segmentBytes; checkpoints name the segment', async () => {
    const sink = open({ segmentBytes: 200 });
    const pad = 'x'.repeat(30);
    const checkpoints: (string | null)[] = [];
    for (let i = 1; i <= 6; i++) checkpoints.push(await sink.write([rec(`https://a.test/${i}`, pad)]));

    const size = bytes([rec('https://a.test/1', pad)]);
    assert.ok(size * 2 < 200 && size * 3 >= 200, `records of ${size} bytes: three fill a segment`);
    assert.deepEqual(checkpoints, [
      `1:${size}`,
      `1:${size * 2}`,
      `1:${size * 3}`,
      `2:${size}`,
      `2:${size * 2}`,
      `2:${size * 3}`,
    ]);
    assert.deepEqual(files(), ['pages-000001.jsonl', 'pages-000002.jsonl', 'pages-000003.jsonl']);
    assert.equal(statSync(join(dir, 'pages-000001.jsonl')).size, size * 3);
    assert.deepEqual(urlsOf(await sink.recover(checkpoints[1] ?? null)), [
      'https://a.test/3',
      'https://a.test/4',
      'https://a.test/5',
      'https://a.test/6',
    ]);
    assert.deepEqual(urlsOf(await sink.recover(checkpoints[2] ?? null)), [
      'https://a.test/4',
      'https://a.test/5',
      'https://a.test/6',
    ]);

    await sink.close();
    assert.deepEqual(files(), ['pages-000001.jsonl', 'pages-000002.jsonl'], 'close drops the empty segment');
  });

  test('gzip: closed segments are compressed; close() compresses the last one', async () => {
    const sink = open({ segmentBytes: 200, gzip: true });
    const pad = 'x'.repeat(30);
    const written: SinkRecord[] = [];
    for (let i = 1; i <= 4; i++) {
      const batch = [rec(`https://a.test/${i}`, pad)];
      written.push(...batch);
      await sink.write(batch);
    }
    await waitFor(
      () => files().includes('pages-000001.jsonl.gz') && !files().includes('pages-000001.jsonl'),
      {
        timeoutMs: 5_000,
        message: 'segment 1 compressed',
      },
    );
    assert.ok(files().includes('pages-000002.jsonl'), 'the open segment stays plain');

    await sink.close();
    assert.deepEqual(files(), ['pages-000001.jsonl.gz', 'pages-000002.jsonl.gz']);
    const text = files()
      .map((f) => gunzipSync(readFileSync(join(dir, f))).toString('utf8'))
      .join('');
    assert.equal(text, written.map((r) => `${r.value.toString()}\n`).join(''));
  });

  test('recover across a rotated and gzipped segment, after a restart', async () => {
    const sink = open({ segmentBytes: 200, gzip: true });
    const pad = 'x'.repeat(30);
    const cp1 = await sink.write([rec('https://a.test/1', pad)]);
    await sink.write([rec('https://a.test/2', pad), rec('https://a.test/3', pad)]); // fills segment 1
    const cp3 = await sink.write([rec('https://a.test/4', pad)]);
    assert.match(cp3 ?? '', /^2:/);
    await sink.close();
    assert.deepEqual(files(), ['pages-000001.jsonl.gz', 'pages-000002.jsonl.gz']);

    const restarted = open({ segmentBytes: 200, gzip: true });
    assert.deepEqual(urlsOf(await restarted.recover(cp1)), [
      'https://a.test/2',
      'https://a.test/3',
      'https://a.test/4',
    ]);
    assert.deepEqual(urlsOf(await restarted.recover(cp3)), []);
    // A restarted sink never appends to a compressed segment: it opens the next one.
    assert.equal(await restarted.write([rec('https://a.test/5')]), `3:${bytes([rec('https://a.test/5')])}`);
    assert.deepEqual(urlsOf(await restarted.recover(cp3)), ['https://a.test/5']);
  });

  test('recover while this sink is still compressing a rotated segment leaves the compression intact', async () => {
    // Large enough that compressing takes a while, so recover() surely runs while the temp file is open.
    const segmentBytes = 4 * 1024 * 1024;
    const sink = open({ segmentBytes, gzip: true });
    const batch = Array.from({ length: 48 }, (_, i) =>
      rec(`https://a.test/${i}`, randomBytes(64 * 1024).toString('base64')),
    );
    assert.ok(bytes(batch) >= segmentBytes);
    await sink.write(batch);
    const tmp = join(dir, 'pages-000001.jsonl.gz.tmp');
    await waitFor(() => existsSync(tmp), {
      timeoutMs: 5_000,
      intervalMs: 1,
      message: 'compression under way',
    });

    assert.equal((await sink.recover(null)).length, batch.length);
    await sink.close();
    assert.deepEqual(files(), ['pages-000001.jsonl.gz'], 'the segment was compressed all the same');
    assert.equal(gunzipSync(readFileSync(join(dir, 'pages-000001.jsonl.gz'))).length, bytes(batch));
  });

  test('a plain segment left beside its .gz by a crash mid-compression stays authoritative', async () => {
    const sink = open({ segmentBytes: 200, gzip: true });
    const pad = 'x'.repeat(30);
    await sink.write([
      rec('https://a.test/1', pad),
      rec('https://a.test/2', pad),
      rec('https://a.test/3', pad),
    ]);
    await sink.close();
    // Simulate the crash window: a half-written .gz.tmp beside the plain file.
    const plain = join(dir, 'pages-000001.jsonl');
    const gz = readFileSync(`${plain}.gz`);
    rmSync(`${plain}.gz`);
    appendFileSync(plain, gunzipSync(gz));
    appendFileSync(`${plain}.gz.tmp`, gz.subarray(0, 10));

    const restarted = open({ gzip: true });
    assert.equal((await restarted.recover(null)).length, 3);
    assert.equal(existsSync(`${plain}.gz.tmp`), false, 'the leftover temp file is removed');
  });

  test('close is safe twice, and a closed sink refuses writes with a typed error', async () => {
    const sink = open();
    await sink.write([rec('https://a.test/1')]);
    await sink.close();
    await sink.close();
    await assert.rejects(sink.write([rec('https://a.test/2')]), { code: 'SINK_CLOSED', retriable: false });
  });
});
