import { closeSync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { StorageError } from '../../errors.js';
import type { PageSink, SinkRecord } from '../../ports/page-sink.js';
import { formatBytes, freeBytes, isDiskFull } from '../disk-space.js';
import { gzipSegment } from './gzip-segment.js';
import { SegmentWriter } from './segment-writer.js';
import { formatCheckpoint, listSegments, parseCheckpoint, segmentName } from './segments.js';

export interface FileSinkOptions {
  dir: string;
  /** Rotate to a new segment once the current one reaches this size. */
  segmentBytes?: number;
  /** Compress segments once closed (`pages-N.jsonl.gz`). */
  gzip?: boolean;
  /** Told of background failures (compression, opening the next segment); the sink goes on. */
  onError?: (err: unknown, path: string) => void;
}

const NEWLINE = Buffer.from('\n');

/**
 * Page records as newline-delimited JSON in size-rotated segments. `write` writes at the end of the
 * durable bytes and fdatasyncs before resolving, so a resolved write survives kill -9 and power
 * loss; a failed one leaves no trace in the file (see SegmentWriter). The checkpoint it returns
 * (`segment:offset`) lets `recover` find records written after the last settled batch.
 *
 * A full disk fails writes with a retriable SINK_DISK_FULL that names the directory and the space
 * left: the caller keeps the batch and writes it again once space is freed.
 */
export class FileSink implements PageSink {
  private readonly dir: string;
  private readonly segmentBytes: number;
  private readonly gzip: boolean;
  private readonly onError: FileSinkOptions['onError'];
  /** The segment written to; 0 until the first write chose one. */
  private index = 0;
  private segment: SegmentWriter | null = null;
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
    if (this.closed) throw new StorageError('SINK_CLOSED', 'the page sink is closed');
    if (records.length === 0) {
      return this.segment === null ? null : formatCheckpoint(this.index, this.segment.offset);
    }
    const parts: Buffer[] = [];
    for (const record of records) parts.push(record.value, NEWLINE);
    const data = Buffer.concat(parts);
    let segment: SegmentWriter;
    try {
      segment = this.openSegment();
      await segment.append(data);
    } catch (err) {
      throw this.writeError(err);
    }
    const checkpoint = formatCheckpoint(this.index, segment.offset);
    if (segment.offset >= this.segmentBytes) this.rotate();
    return checkpoint;
  }

  private writeError(err: unknown): StorageError {
    if (isDiskFull(err)) {
      const free = freeBytes(this.dir);
      return new StorageError(
        'SINK_DISK_FULL',
        `the disk holding ${this.dir} is full (${formatBytes(free)} free): page records cannot be written until space is freed there; nothing is acknowledged meanwhile, and the crawl resumes by itself`,
        { cause: err, details: { path: this.dir, freeBytes: free } },
      );
    }
    return new StorageError('SINK_IO', `cannot write page records in ${this.dir}: ${String(err)}`, {
      cause: err,
      details: { path: this.dir },
    });
  }

  /** The segment to write to: the last plain one of the folder at first, then the one rotated to. */
  private openSegment(): SegmentWriter {
    if (this.segment !== null) return this.segment;
    if (this.index === 0) {
      const last = listSegments(this.dir).at(-1);
      this.index = last === undefined ? 1 : last.gzip ? last.index + 1 : last.index;
    }
    this.segment = SegmentWriter.open(join(this.dir, segmentName(this.index, false)));
    return this.segment;
  }

  /**
   * Closes the full segment and opens the next. Never throws: the write that filled the segment is
   * durable and must be reported so; a next segment that cannot be opened now is opened by the
   * next write (whose failure, if any, is then that write's).
   */
  private rotate(): void {
    const full = this.segment;
    if (full === null) return;
    this.segment = null;
    try {
      full.close();
    } catch (err) {
      this.onError?.(err, full.path);
    }
    if (this.gzip) this.compressions.push(this.compress(full.path));
    this.index += 1;
    try {
      this.openSegment();
    } catch (err) {
      this.onError?.(err, join(this.dir, segmentName(this.index, false)));
    }
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
    const last = this.segment;
    if (last !== null) {
      this.segment = null;
      last.close();
      if (this.gzip && last.offset > 0) this.compressions.push(this.compress(last.path));
      else if (last.offset === 0) rmSync(last.path, { force: true });
    }
    await Promise.all(this.compressions);
  }
}
