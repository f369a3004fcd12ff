import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';

/**
 * Holds a WebSocket's writes until the end of the event loop's turn, so that what a crawler sends
 * in one turn (the outcomes of the pages that finished in it, then their credit) reaches the kernel
 * in one system call. `ws` writes each message by itself (it corks only a frame's header with its
 * payload), and one `writev` per outcome was a tenth of a crawler's CPU in the bench's profile.
 *
 * `beforeRelease` runs just before the held writes go out, so what it sends joins them.
 */
export class TurnWrites {
  private held: Duplex | null = null;

  constructor(private readonly beforeRelease: () => void) {}

  /** From now until the end of this turn, `ws`'s writes wait and then go out together. */
  hold(ws: WebSocket): void {
    if (this.held !== null) return;
    const socket = socketOf(ws);
    if (socket === null || socket.destroyed) return;
    socket.cork();
    this.held = socket;
    setImmediate(() => this.release());
  }

  private release(): void {
    const socket = this.held;
    try {
      // Still held: what this sends joins the writes held in this turn.
      this.beforeRelease();
    } finally {
      this.held = null;
      socket?.uncork();
    }
  }
}

/**
 * The TCP (or TLS) socket under an open WebSocket: `ws` keeps it as `_socket` and offers no public
 * way to it. Null while connecting or once closed. `test/unit/turn-writes.test.ts` fails if a
 * version of `ws` moves it.
 */
export function socketOf(ws: WebSocket): Duplex | null {
  return (ws as unknown as { _socket?: Duplex | null })._socket ?? null;
}
