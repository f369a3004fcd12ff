import {
  closeSync,
  constants,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { freeBytes, fsyncDir, isDiskFull } from '../disk-space.js';

const fdatasyncAsync = promisify(fdatasync);
const NEWLINE = 0x0a;
/** What the last, partly filled block of a file may still take without a free block. */
const TAIL_BLOCK_BYTES = 4096;

/**
 * One open segment file, written at explicit offsets. It is opened without O_APPEND, under which
 * Linux ignores the position of a write; and `offset` is always the end of what is durable. A write
 * that fails (a short write on a full disk, an I/O error, a failed sync) is cut back to `offset`
 * before anything else is written to the file, so the retried batch starts exactly where the failed
 * one did: no fragment of it stays between two records, and a checkpoint never falls behind the
 * file.
 */
export class SegmentWriter {
  /** Bytes past `offset` may be on disk from a failed write: cut them before the next write. */
  private dirty = false;
  /** The last write failed for want of space: the next one first asks whether it can fit. */
  private full = false;
  /** The directory entry of this file is not known to be durable yet. */
  private nameUnsynced = true;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private end: number,
  ) {}

  /**
   * Opens `path`, creating it if missing. A torn last line (a crash mid-write, never acknowledged)
   * is cut off, so the first write starts on a line of its own.
   */
  static open(path: string): SegmentWriter {
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
    try {
      const size = fstatSync(fd).size;
      const end = lastLineEnd(fd, size);
      if (end < size) {
        ftruncateSync(fd, end);
        fdatasyncSync(fd);
      }
      return new SegmentWriter(path, fd, end);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** The end of the durable bytes: where the next write goes. */
  get offset(): number {
    return this.end;
  }

  /** Writes `data` at `offset` and syncs it (and, the first time, the file's name in its directory). */
  async append(data: Buffer): Promise<void> {
    if (this.dirty) this.cutBack();
    if (this.full) this.refuseWhatCannotFit(data.length);
    try {
      let written = 0;
      while (written < data.length) {
        const n = writeSync(this.fd, data, written, data.length - written, this.end + written);
        if (n <= 0) throw Object.assign(new Error(`write returned ${n}`), { code: 'EIO' });
        written += n;
      }
      // The sync runs off the event loop: outcomes keep arriving (and batching) meanwhile.
      await fdatasyncAsync(this.fd);
      if (this.nameUnsynced) {
        fsyncDir(dirname(this.path));
        this.nameUnsynced = false;
      }
    } catch (err) {
      this.full = isDiskFull(err);
      this.dirty = true;
      try {
        this.cutBack();
      } catch {
        // Still failing: tried again before the next write, which cannot start until it works.
      }
      throw err;
    }
    this.end += data.length;
    this.full = false;
  }

  /**
   * On a disk that was full at the last write: a batch that cannot fit in what is free (less the
   * partial block the file's tail may fill) fails ENOSPC without being written. Otherwise each retry
   * of a stalled sink would write a fragment and cut it back again, over and over, and a reader of
   * the segment meanwhile could see the fragment.
   */
  private refuseWhatCannotFit(bytes: number): void {
    const free = freeBytes(dirname(this.path));
    if (free === null || free + TAIL_BLOCK_BYTES >= bytes) return;
    throw Object.assign(new Error(`ENOSPC: ${free} bytes free for a write of ${bytes} to ${this.path}`), {
      code: 'ENOSPC',
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private cutBack(): void {
    ftruncateSync(this.fd, this.end);
    fdatasyncSync(this.fd);
    this.dirty = false;
  }
}

/** The offset just after the last newline of the file's first `size` bytes (0 if it has none). */
function lastLineEnd(fd: number, size: number): number {
  const chunk = Buffer.allocUnsafe(64 * 1024);
  let pos = size;
  while (pos > 0) {
    const length = Math.min(chunk.length, pos);
    pos -= length;
    const read = readSync(fd, chunk, 0, length, pos);
    const at = chunk.subarray(0, read).lastIndexOf(NEWLINE);
    if (at >= 0) return pos + at + 1;
  }
  return 0;
}
