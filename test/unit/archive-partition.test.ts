import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KafkaMessage } from 'kafkajs';
import { archiveName, parseArchiveName } from '../../client/archiver/archive-batch.js';
import { archiveLine } from '../../client/archiver/archive-line.js';
import { PartitionArchive, type PartitionArchiveOptions } from '../../client/archiver/partition-archive.js';
import { LocalBlobStore } from '../../shared/adapters/blob-store/local-blob-store.js';
import { StorageError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import { archiveKey, type BlobStore } from '../../shared/ports/blob-store.js';
import { waitFor } from '../helpers/wait-for.js';

const DAY = new Date('2024-04-01T12:00:00Z');

function message(offset: number, value: Buffer | string | null = null): KafkaMessage {
  const body =
    value ?? JSON.stringify({ url: `https://a.test/${offset}`, fetchedAt: DAY.toISOString(), n: offset });
  return {
    offset: String(offset),
    key: Buffer.from(`https://a.test/${offset}`),
    value: typeof body === 'string' ? Buffer.from(body) : body,
    timestamp: String(Date.parse('2030-01-01T00:00:00Z')),
    attributes: 0,
    headers: {},
  } as KafkaMessage;
}

interface Envelope {
  offset: number;
  key: string | null;
  value?: unknown;
  valueBase64?: string;
}

describe('archiver: one partition', () => {
  let dir: string;
  let store: LocalBlobStore;
  let clock: number;
  let commits: bigint[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'archive-partition-'));
    store = new LocalBlobStore({ dir });
    clock = 0;
    commits = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function archive(options: Partial<PartitionArchiveOptions> = {}): PartitionArchive {
    return new PartitionArchive({
      jobId: 'job-1',
      topic: 'pages',
      partition: 0,
      maxRecords: 1000,
      maxBytes: 1024 * 1024,
      maxAgeMs: 1000,
      blobStore: store,
      commit: async (next) => {
        commits.push(next);
      },
      logger: silentLogger(),
      now: () => clock,
      retryInitialDelayMs: 5,
      retryMaxDelayMs: 20,
      ...options,
    });
  }

  const key = (first: number, last: number, date = DAY): string =>
    archiveKey({ jobId: 'job-1', date, name: archiveName('pages', 0, BigInt(first), BigInt(last)) });

  async function read(k: string): Promise<Envelope[]> {
    const text = gunzipSync(await store.get(k)).toString('utf8');
    assert.ok(text.endsWith('\n'));
    return text
      .slice(0, -1)
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope);
  }

  async function keys(): Promise<string[]> {
    const found: string[] = [];
    for await (const k of store.list('archives/')) found.push(k);
    return found.sort();
  }

  it('stores a full batch, then commits the offset after it', async () => {
    const part = archive({ maxRecords: 3 });
    part.noteHighWatermark('10');
    assert.deepEqual(
      [0, 1, 2, 3].map((o) => part.offer(message(o))),
      ['taken', 'taken', 'taken', 'busy'],
    );
    let resumed = false;
    part.pauseFetching(() => () => (resumed = true));
    await waitFor(() => resumed, { message: 'fetching resumed after the store' });
    assert.deepEqual(await keys(), [key(0, 2)]);
    assert.deepEqual(commits, [3n]);
    assert.deepEqual(
      (await read(key(0, 2))).map((e) => e.offset),
      [0, 1, 2],
    );
    // A refetch after a rebalance starts at the commit: what was taken is skipped.
    assert.equal(part.offer(message(2)), 'skipped');
    assert.equal(part.offer(message(3)), 'taken');
  });

  it('keeps a batch within maxBytes: the record that would overflow waits for the next batch', async () => {
    const lineBytes = archiveLine('pages', 0, message(0)).bytes.length;
    const part = archive({ maxBytes: lineBytes * 2 + 1 });
    assert.equal(part.offer(message(0)), 'taken');
    assert.equal(part.offer(message(1)), 'taken');
    assert.equal(part.offer(message(2)), 'busy');
    await waitFor(() => commits.length === 1);
    assert.deepEqual(await keys(), [key(0, 1)]);
    assert.equal(part.offer(message(2)), 'taken');
  });

  it('stores an old batch when its age passes maxAgeMs', async () => {
    const part = archive({ maxAgeMs: 1000 });
    part.noteHighWatermark('2');
    part.offer(message(0));
    part.offer(message(1));
    clock = 999;
    part.tick();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(await keys(), []);
    clock = 1000;
    part.tick();
    await waitFor(() => commits.length === 1);
    assert.deepEqual(await keys(), [key(0, 1)]);
    assert.deepEqual(commits, [2n]);
    assert.ok(part.idle);
  });

  it('keeps raw data: JSON byte for byte, anything else as base64, tombstones as null', async () => {
    const part = archive();
    const json = '{"url":"https://a.test/x","fetchedAt":"2024-04-01T12:00:00.000Z","n":1.50}';
    const pretty = '{\n  "url": "https://a.test/y"\n}';
    const binary = Buffer.from([0xff, 0x00, 0x0a, 0x7b]);
    part.offer(message(0, json));
    part.offer(message(1, pretty));
    part.offer(message(2, binary));
    part.offer(message(3, 'not json at all'));
    part.offer({ ...message(4), value: null } as KafkaMessage);
    await part.drain();
    const [k] = await keys();
    assert.equal(k, key(0, 4));
    const raw = gunzipSync(await store.get(key(0, 4))).toString('utf8');
    assert.ok(raw.includes(`,"value":${json}}\n`), 'JSON is embedded as it was (1.50 stays 1.50)');
    const lines = await read(key(0, 4));
    assert.equal(lines.length, 5);
    assert.deepEqual(lines[1]?.value, { url: 'https://a.test/y' });
    assert.deepEqual(Buffer.from(lines[2]?.valueBase64 ?? '', 'base64'), binary);
    assert.equal(Buffer.from(lines[3]?.valueBase64 ?? '', 'base64').toString(), 'not json at all');
    assert.equal(lines[4]?.value, null);
    assert.equal(lines[0]?.key, 'https://a.test/0');
    assert.deepEqual(commits, [5n]);
  });

  it('files a batch under the UTC date of its first record, else of its Kafka timestamp', async () => {
    const part = archive();
    part.offer(message(0, '{"fetchedAt":"2024-12-31T23:30:00-01:00"}'));
    part.offer(message(1));
    await part.drain();
    assert.deepEqual(await keys(), ['archives/job-1/2025/01/01/pages-p0-0-1.jsonl.gz']);
    const other = archive();
    other.offer(message(2, 'raw'));
    await other.drain();
    assert.ok((await keys()).includes('archives/job-1/2030/01/01/pages-p0-2-2.jsonl.gz'));
  });

  it('overwrites the object a crashed run stored without committing, cutting the batch there', async () => {
    // The previous run stored 0..2 and died before committing: the group restarts at 0.
    await store.put(key(0, 2), gzipSync('stale\n'));
    const part = archive();
    part.noteHighWatermark('6');
    for (let o = 0; o < 6; o += 1) part.offer(message(o));
    await part.drain();
    assert.deepEqual(await keys(), [key(0, 2), key(3, 5)]);
    assert.deepEqual(
      (await read(key(0, 2))).map((e) => e.offset),
      [0, 1, 2],
    );
    assert.deepEqual(commits, [3n, 6n]);
  });

  it('fills up to a longer object of a crashed run before storing over it', async () => {
    await store.put(key(0, 5), gzipSync('stale\n'));
    const part = archive({ maxAgeMs: 10 });
    part.noteHighWatermark('9');
    for (let o = 0; o < 3; o += 1) part.offer(message(o));
    clock = 10;
    part.tick();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(commits, [], 'nothing stored yet: records 3..5 are still to come');
    for (let o = 3; o < 6; o += 1) assert.equal(part.offer(message(o)), 'taken');
    await waitFor(() => commits.length === 1);
    assert.deepEqual(await keys(), [key(0, 5)]);
    assert.equal((await read(key(0, 5))).length, 6);
    assert.deepEqual(commits, [6n]);
  });

  it('stores its own batch when Kafka has nothing more to give (the rest was compacted away)', async () => {
    await store.put(key(0, 5), gzipSync('stale\n'));
    const part = archive({ maxAgeMs: 10 });
    part.noteHighWatermark('3');
    for (let o = 0; o < 3; o += 1) part.offer(message(o));
    clock = 10;
    part.tick();
    await waitFor(() => commits.length === 1);
    assert.deepEqual(await keys(), [key(0, 2), key(0, 5)]);
  });

  it('an S3 outage keeps the batch and retries; nothing is committed before the store', async () => {
    let down = true;
    let failures = 0;
    const flaky: BlobStore = Object.assign(Object.create(store) as BlobStore, {
      put: async (k: string, body: Buffer) => {
        if (down) {
          failures += 1;
          throw new StorageError('BLOB_STORE_UNAVAILABLE', 'S3 is unavailable (ECONNREFUSED)');
        }
        return store.put(k, body);
      },
    });
    const part = archive({ blobStore: flaky, maxRecords: 2 });
    part.offer(message(0));
    part.offer(message(1));
    assert.equal(part.offer(message(2)), 'busy');
    await waitFor(() => failures >= 3, { message: 'retries' });
    assert.deepEqual(commits, []);
    assert.equal(part.offer(message(2)), 'busy', 'the partition stays paused');
    down = false;
    await waitFor(() => commits.length === 1);
    assert.deepEqual(await keys(), [key(0, 1)]);
  });

  it('a revoked partition drops its batch and commits nothing more', async () => {
    const part = archive();
    part.offer(message(0));
    part.abandon('partition revoked');
    await part.drain();
    assert.deepEqual(await keys(), []);
    assert.deepEqual(commits, []);
    assert.equal(part.offer(message(1)), 'busy');
  });

  it('names parse back into their parts', () => {
    assert.deepEqual(parseArchiveName('ackcrawl.pages-p12-100-199.jsonl.gz'), {
      topic: 'ackcrawl.pages',
      partition: 12,
      first: 100n,
      last: 199n,
    });
    assert.equal(parseArchiveName('something-else.gz'), null);
  });
});
