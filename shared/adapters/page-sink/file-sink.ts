import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fdatasync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { StorageError } from '../../errors.js';
import type { PageSink, SinkRecord } from '../../ports/page-sink.js';
import { gzipSegment } from './gzip-segment.js';
import { formatCheckpoint, listSegments, parseCheckpoint, segmentName } from './segments.js';

export interface FileSinkOptions {
  dir: string;
  /** Rotate to a new segment once the current one reaches this size. */
  segmentBytes?: number;
  /** Compress segments once closed (`pages-N.jsonl.gz`). */
  gzip?: boolean;
  /** Told of background failures (compression); the sink goes on. */
  onError?: (err: unknown, path: string) => void;
}

const NEWLINE = Buffer.from('\n');
const fdatasyncAsync = promisify(fdatasync);

/**
 * Page records as newline-delimited JSON in size-rotated segments. `write` appends and fdatasyncs
 * before resolving, so a resolved write survives kill -9 and power loss. The checkpoint it returns
 * (`segment:offset`) lets `recover` find records written after the last settled batch.
 */
export class FileSink implements PageSink {
  private readonly dir: string;
  private readonly segmentBytes: number;
  private readonly gzip: boolean;
  private readonly onError: FileSinkOptions['onError'];
  private index = 0;
  private fd: number | null = null;
  private offset = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private compressions: Promise<unknown>[] = [];
  private closed = false;

  constructor(options: FileSinkOptions) {
    this.dir = options.dir;
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
    this.gzip = options.gzip ?? false;
    this.onError = options.onError;
    mkdirSync(this.dir, { recursive: true });
  }

  write(records: readonly SinkRecord[]): Promise<string | null> {
    const run = this.chain.then(() => this.writeNow(records));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async writeNow(records: readonly SinkRecord[]): Promise<string | null> {
    if (this.closed) throw new StorageError('SINK_CLOSED', 'the page sink is closed', { retriable: false });
    if (records.length === 0) return this.fd === null ? null : formatCheckpoint(this.index, this.offset);
    const parts: Buffer[] = [];
    for (const record of records) parts.push(record.value, NEWLINE);
    const data = Buffer.concat(parts);
    try {
      const fd = this.activeFd();
      let written = 0;
      while (written < data.length) {
        written += writeSync(fd, data, written, data.length - written, this.offset + written);
      }
      // The sync runs off the event loop: outcomes keep arriving (and batching) meanwhile.
      await fdatasyncAsync(fd);
      this.offset += data.length;
    } catch (err) {
      throw new StorageError('SINK_IO', `cannot write page records in ${this.dir}: ${String(err)}`, {
        cause: err,
      });
    }
    const checkpoint = formatCheckpoint(this.index, this.offset);
    if (this.offset >= this.segmentBytes) this.rotate();
    return checkpoint;
  }

  private activeFd(): number {
    if (this.fd !== null) return this.fd;
    const last = listSegments(this.dir).at(-1);
    this.index = last === undefined ? 1 : last.gzip ? last.index + 1 : last.index;
    const path = join(this.dir, segmentName(this.index, false));
    this.fd = openSync(path, 'a+');
    this.offset = fstatSync(this.fd).size;
    return this.fd;
  }

  private rotate(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    const closedPath = join(this.dir, segmentName(this.index, false));
    if (this.gzip) this.compressions.push(this.compress(closedPath));
    this.index += 1;
    this.fd = openSync(join(this.dir, segmentName(this.index, false)), 'a+');
    this.offset = 0;
  }

  /**
   * A failed compression (disk full, say) leaves the plain segment, which readers accept as well:
   * it is reported, never an unhandled rejection.
   */
  private compress(path: string): Promise<unknown> {
    return gzipSegment(path).catch((err: unknown) => this.onError?.(err, path));
  }

  /**
   * Records after `checkpoint`, in every segment from the checkpoint's on. A torn last line (a crash
   * mid-write, before fdatasync returned) is cut off: it was never acknowledged to anyone.
   */
  async recover(checkpoint: string | null): Promise<SinkRecord[]> {
    await this.chain;
    // This sink's own compressions first: the `.gz.tmp` they are writing is no crash leftover, and
    // removing it below would make them fail (the segment stays plain and close() rejects).
    await Promise.allSettled(this.compressions);
    const from = parseCheckpoint(checkpoint) ?? { index: 0, offset: 0 };
    const segments = listSegments(this.dir);
    for (const seg of segments) if (!seg.gzip) rmSync(`${seg.path}.gz.tmp`, { force: true });
    const found: SinkRecord[] = [];
    for (const [i, seg] of segments.entries()) {
      if (seg.index < from.index) continue;
      const isLast = i === segments.length - 1;
      let data: Buffer = seg.gzip ? gunzipSync(readFileSync(seg.path)) : readFileSync(seg.path);
      if (isLast && !seg.gzip) data = this.cutTornTail(seg.path, data);
      const start = seg.index === from.index ? Math.min(from.offset, data.length) : 0;
      for (const line of data.subarray(start).toString('utf8').split('\n')) {
        if (line.length === 0) continue;
        try {
          const parsed = JSON.parse(line) as { url?: unknown };
          if (typeof parsed.url === 'string') found.push({ key: parsed.url, value: Buffer.from(line) });
        } catch {
          // A line that is not JSON cannot be attributed to a URL; its task will be fetched again.
        }
      }
    }
    return found;
  }

  private cutTornTail(path: string, data: Buffer): Buffer {
    const end = data.lastIndexOf(0x0a) + 1;
    if (end === data.length) return data;
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, end);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return data.subarray(0, end);
  }

  /** Flushes pending writes and, with gzip, compresses the last segment too. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.chain;
    this.closed = true;
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
      const path = join(this.dir, segmentName(this.index, false));
      if (this.gzip && this.offset > 0) this.compressions.push(this.compress(path));
      else if (this.offset === 0) rmSync(path, { force: true });
    }
    await Promise.all(this.compressions);
  }
}
