import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { listSegments, segmentName, type SegmentFile } from '../../shared/adapters/page-sink/segments.js';
import { KEY_LENGTHS } from '../../shared/adapters/sql-store/migrations.js';
import type { Logger } from '../../shared/logger.js';
import type { BatchCleaner, ReadRecord } from './batch-cleaner.js';
import { segmentLines } from './segment-lines.js';
import { readPosition, writePosition, type SegmentPosition } from './segment-position.js';

export interface SegmentReaderOptions {
  /** The file sink's folder (an embedded crawl's or `ackcrawl serve`'s output). */
  dir: string;
  positionFile: string;
  cleaner: BatchCleaner;
  logger: Logger;
  chunkRecords: number;
  /** Keep reading as the crawl writes (true), or stop at the end of what is there. */
  follow: boolean;
  pollMs: number;
  now: () => number;
}

/**
 * `ackcrawl extract --records DIR`: the record files' counterpart of the Kafka consumer. Reads the
 * segments in order, cleans and commits a chunk at a time, and only then writes its position
 * (segment-position.ts), so a crash reads at most one chunk again (rewriting the same rows). A
 * segment is done once a later one exists: the sink never writes to an earlier segment again.
 */
export class SegmentExtractReader {
  private position: SegmentPosition;
  private stopping = false;
  private wake: (() => void) | null = null;
  private readonly sourcePrefix: string;

  constructor(private readonly o: SegmentReaderOptions) {
    this.position = readPosition(o.positionFile);
    const dir = resolve(o.dir);
    // A source names its record uniquely across folders; a very long path is named by its hash.
    const prefix = `file:${dir}/`;
    this.sourcePrefix =
      prefix.length + 40 <= KEY_LENGTHS.source
        ? prefix
        : `file:${createHash('sha256').update(dir).digest('hex').slice(0, 32)}/`;
  }

  get at(): SegmentPosition {
    return { ...this.position };
  }

  /** Reads until stopped (follow) or until nothing new is left. */
  async run(): Promise<void> {
    while (!this.stopping) {
      const progressed = await this.readAvailable();
      if (this.stopping || (!this.o.follow && !progressed)) return;
      if (!progressed) await this.pause();
    }
  }

  /** Ends run() after the chunk in hand is committed. */
  stop(): void {
    this.stopping = true;
    this.wake?.();
  }

  private pause(): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(finish, this.o.pollMs);
      function finish(): void {
        clearTimeout(timer);
        done();
      }
      this.wake = finish;
    });
  }

  /** One pass over what is there; true when it cleaned a record or moved to another segment. */
  private async readAvailable(): Promise<boolean> {
    let progressed = false;
    for (;;) {
      if (this.stopping) return progressed;
      const segments = listSegments(this.o.dir);
      const current = segments.find((s) => s.index === this.position.index);
      const next = segments.find((s) => s.index > this.position.index);
      if (current === undefined) {
        if (next === undefined) return progressed;
        this.moveTo({ index: next.index, line: 0 });
        progressed = true;
        continue;
      }
      const first = await this.readSegment(current);
      // Gone under us: the sink gzipped it at rotation (or it was removed); list again.
      if (first === 'gone') continue;
      if (first) progressed = true;
      if (this.stopping || next === undefined) return progressed;
      // A later segment exists: this one is complete. Read it once more (lines written before
      // the rotation we may have missed), from where it is now, then move on.
      const latest = listSegments(this.o.dir).find((s) => s.index === current.index);
      if (latest !== undefined) {
        const again = await this.readSegment(latest);
        if (again === 'gone') continue;
        if (again) progressed = true;
      }
      this.moveTo({ index: next.index, line: 0 });
      progressed = true;
    }
  }

  /** Reads the segment from the position on; 'gone' when its file went away before or while it was read. */
  private async readSegment(segment: SegmentFile): Promise<boolean | 'gone'> {
    const name = segmentName(segment.index, false);
    let chunk: ReadRecord[] = [];
    let line = this.position.line;
    let any = false;
    try {
      for await (const value of segmentLines(segment.path, segment.gzip, this.position.line)) {
        if (value.length > 0) chunk.push({ value, source: `${this.sourcePrefix}${name}:${line}` });
        line += 1;
        if (chunk.length >= this.o.chunkRecords) {
          await this.commit(chunk, { index: segment.index, line });
          chunk = [];
          any = true;
          if (this.stopping) return any;
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // What was read and committed stays; the rest is read again from the position.
      return 'gone';
    }
    if (chunk.length > 0 || line > this.position.line) {
      await this.commit(chunk, { index: segment.index, line });
      any = true;
    }
    return any;
  }

  private async commit(chunk: readonly ReadRecord[], to: SegmentPosition): Promise<void> {
    if (chunk.length > 0) await this.o.cleaner.cleanAndCommit(chunk);
    this.moveTo(to);
  }

  private moveTo(to: SegmentPosition): void {
    this.position = to;
    writePosition(this.o.positionFile, to, this.o.now());
  }
}
