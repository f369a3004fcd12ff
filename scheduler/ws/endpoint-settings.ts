import type { ConnectionLimits } from '../../shared/http/connection-limits.js';

/** Limits of the scheduler's port (crawler endpoint and HTTP API); defaults below. */
export interface EndpointSettings extends ConnectionLimits {
  /** A crawler socket that has not said hello by then is closed. */
  helloTimeoutMs: number;
  /**
   * Tasks one crawler session may hold: those sent and not answered yet, plus its unused credit.
   * Credit beyond is ignored, so a crawler cannot pull the whole buffer by asking for it.
   */
  maxSessionCredit: number;
  /** Time for a request's headers to arrive (slowloris), and for the whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Host names answered besides the defaults (shared/http/request-guards.ts). */
  allowedHosts: readonly string[];
}

/**
 * Room for hundreds of crawler processes per address (an agent's host, a NAT) and a thousand in
 * all, with the API's connections beside them; a crawler grants 1.5 × its concurrency in credit.
 */
export const ENDPOINT_DEFAULTS: EndpointSettings = {
  maxConnections: 1024,
  maxConnectionsPerAddress: 256,
  retryAfterSeconds: 5,
  helloTimeoutMs: 5_000,
  maxSessionCredit: 1_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  allowedHosts: [],
};

/** The largest request head read (Node's default; the API needs a few hundred bytes). */
export const MAX_HEADER_BYTES = 16 * 1024;
