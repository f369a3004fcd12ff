/**
 * Codes of the scheduler⇄crawler WebSocket's `error` messages. A non-fatal one rejects one frame
 * and the session goes on; a fatal one is followed by a close (1008).
 */
export interface ProtocolErrorSpec {
  fatal: boolean;
  retriable: false;
  meaning: string;
}

export const PROTOCOL_ERROR_CODES = {
  BAD_FRAME: {
    fatal: false,
    retriable: false,
    meaning: 'a frame that is not a valid message (bad JSON, wrong shape, over the size limit)',
  },
  NOT_READY: { fatal: false, retriable: false, meaning: 'a message other than hello before the hello' },
  DUPLICATE_HELLO: { fatal: false, retriable: false, meaning: 'a second hello on one session' },
  TOO_MANY_BAD_FRAMES: { fatal: true, retriable: false, meaning: 'over 100 bad frames on one session' },
  PROTOCOL_VERSION: {
    fatal: true,
    retriable: false,
    meaning: 'the hello names a protocol version this scheduler does not speak',
  },
  HELLO_TIMEOUT: { fatal: true, retriable: false, meaning: 'no hello within 5 s of the socket opening' },
  PRE_HELLO_LIMIT: { fatal: true, retriable: false, meaning: 'over 64 KiB sent before the hello' },
} as const satisfies Record<string, ProtocolErrorSpec>;

export type ProtocolErrorCode = keyof typeof PROTOCOL_ERROR_CODES;
