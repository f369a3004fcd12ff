import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { InvalidInputError } from '../../shared/errors.js';
import { archiveKey } from '../../shared/ports/blob-store.js';
import type { ArchiveLine } from './archive-line.js';

/** Where one partition's archive objects go: `archives/<jobId>/<yyyy>/<mm>/<dd>/<topic>-p<partition>-…`. */
export interface ArchivePlace {
  jobId: string;
  topic: string;
  partition: number;
}

/** `<topic>-p<partition>-<firstOffset>-<lastOffset>.jsonl.gz`: the same records, the same name. */
export function archiveName(topic: string, partition: number, first: bigint, last: bigint): string {
  return `${topic}-p${partition}-${first}-${last}.jsonl.gz`;
}

export interface ParsedArchiveName {
  topic: string;
  partition: number;
  first: bigint;
  last: bigint;
}

export function parseArchiveName(name: string): ParsedArchiveName | null {
  const match = /^(.+)-p(\d+)-(\d+)-(\d+)\.jsonl\.gz$/.exec(name);
  if (!match) return null;
  const [, topic = '', partition = '', first = '', last = ''] = match;
  return { topic, partition: Number(partition), first: BigInt(first), last: BigInt(last) };
}

/**
 * The key prefix of the objects that start at `first`: a record's date folder is fixed by the
 * record, so a previous run's object from the same offset is under this prefix.
 */
export function archivePrefix(place: ArchivePlace, date: Date, first: bigint): string {
  return archiveKey({ jobId: place.jobId, date, name: `${place.topic}-p${place.partition}-${first}-` });
}

/** Consecutive lines of one partition, in offset order, that become one archive object. */
export class ArchiveBatch {
  private readonly lines: ArchiveLine[] = [];
  private size = 0;

  /** `startedAt`: when the first line arrived, on the archiver's clock (for the age limit). */
  constructor(readonly startedAt: number) {}

  get count(): number {
    return this.lines.length;
  }

  /** Uncompressed bytes. */
  get bytes(): number {
    return this.size;
  }

  get first(): bigint {
    return this.edge(0).offset;
  }

  get last(): bigint {
    return this.edge(this.lines.length - 1).offset;
  }

  /** The UTC date folder: the first record's. */
  get date(): Date {
    return this.edge(0).date;
  }

  add(line: ArchiveLine): void {
    this.lines.push(line);
    this.size += line.bytes.length;
  }

  /** Splits after `offset`: the lines up to it, and the rest (null when none is left). */
  splitAfter(offset: bigint): [ArchiveBatch, ArchiveBatch | null] {
    const head = new ArchiveBatch(this.startedAt);
    const tail = new ArchiveBatch(this.startedAt);
    for (const line of this.lines) (line.offset <= offset ? head : tail).add(line);
    return [head, tail.count > 0 ? tail : null];
  }

  key(place: ArchivePlace): string {
    return archiveKey({
      jobId: place.jobId,
      date: this.date,
      name: archiveName(place.topic, place.partition, this.first, this.last),
    });
  }

  /** The object's bytes: the lines, gzip-compressed (off the event loop, without one big copy). */
  async encode(): Promise<Buffer> {
    const gzip = createGzip();
    const [body] = await Promise.all([
      buffer(gzip),
      pipeline(
        Readable.from(
          this.lines.map((l) => l.bytes),
          { objectMode: false },
        ),
        gzip,
      ),
    ]);
    return body;
  }

  private edge(index: number): ArchiveLine {
    const line = this.lines[index];
    if (!line) throw new InvalidInputError('ARCHIVE_EMPTY_BATCH', 'an empty batch has no offsets');
    return line;
  }
}
