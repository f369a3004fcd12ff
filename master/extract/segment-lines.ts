import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/**
 * The complete lines of a record file segment (plain or gzip), each without its newline, from
 * line `skip` on, streamed: memory holds one read chunk and one line, not the segment. A last line
 * without its newline (a write in progress, or torn by a crash) is not a record yet and is left out.
 */
export async function* segmentLines(path: string, gzip: boolean, skip: number): AsyncGenerator<Buffer> {
  const file = createReadStream(path, { highWaterMark: 256 * 1024 });
  const stream: Readable = gzip ? file.pipe(createGunzip()) : file;
  let line = 0;
  let pending: Buffer[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, from);
        if (nl < 0) break;
        const piece = chunk.subarray(from, nl);
        const whole = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        from = nl + 1;
        if (line++ >= skip) yield Buffer.from(whole);
      }
      if (from < chunk.length) pending.push(chunk.subarray(from));
    }
  } finally {
    file.destroy();
  }
}
