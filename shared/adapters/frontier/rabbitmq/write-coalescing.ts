import type { ChannelModel } from 'amqplib';
import type { Writable } from 'node:stream';

/**
 * amqplib writes every frame to its socket on its own (a publish is three frames, an ack one) and
 * the socket runs without Nagle, so a settle of a hundred tasks costs hundreds of write syscalls
 * and TCP segments. This corks the connection's socket at the first write of an event-loop turn
 * and uncorks it on the next tick: the frames of one turn leave in one writev, in the same order,
 * with no added delay beyond the current turn. Backpressure is unchanged (write still returns
 * false past the high-water mark and 'drain' follows).
 *
 * Returns false, changing nothing, when the connection does not expose a stream (a test double).
 */
export function coalesceWrites(model: ChannelModel): boolean {
  const stream = (model as unknown as { connection?: { stream?: unknown } }).connection?.stream;
  if (!isCorkable(stream)) return false;
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    stream.uncork();
  };
  stream.write = ((...args: unknown[]): boolean => {
    if (!corked && !stream.destroyed) {
      corked = true;
      stream.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as Writable['write'];
  return true;
}

function isCorkable(stream: unknown): stream is Writable {
  const s = stream as Partial<Writable> | undefined;
  return typeof s?.write === 'function' && typeof s.cork === 'function' && typeof s.uncork === 'function';
}
