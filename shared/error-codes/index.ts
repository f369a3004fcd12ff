import { API_ERROR_CODES, type ApiErrorCode } from './api.js';
import { PAGE_ERROR_CODES, pageErrorSpec, type PageErrorCode } from './page.js';
import { PROTOCOL_ERROR_CODES, type ProtocolErrorCode } from './protocol.js';
import { SERVICE_ERROR_CODES, type ServiceErrorCode } from './service.js';

/**
 * The catalogue of every error code ackcrawl produces, in four groups: what lands in page records
 * (page.ts), what an HTTP API answers (api.ts), what the WebSocket's `error` messages say
 * (protocol.ts), and failures of the roles and their services (service.ts). A code is declared
 * once, with whether trying again can help, its HTTP status where it has one, and what it means;
 * AppError takes its defaults from here, and docs/error-codes.md is generated from it.
 */
export type ErrorCode = PageErrorCode | ApiErrorCode | ProtocolErrorCode | ServiceErrorCode;

export interface ErrorCodeFacts {
  group: 'page' | 'api' | 'protocol' | 'service';
  retriable: boolean;
  status: number | undefined;
  meaning: string;
}

const GROUPS = [
  ['page', PAGE_ERROR_CODES],
  ['api', API_ERROR_CODES],
  ['protocol', PROTOCOL_ERROR_CODES],
  ['service', SERVICE_ERROR_CODES],
] as const;

/** What the catalogue says of `code`; undefined for a code it does not know (another version's). */
export function errorCodeFacts(code: string): ErrorCodeFacts | undefined {
  const page = pageErrorSpec(code);
  if (page) return { group: 'page', retriable: page.retriable, status: undefined, meaning: page.meaning };
  for (const [group, codes] of GROUPS) {
    if (!Object.hasOwn(codes, code)) continue;
    const spec = (codes as Record<string, { retriable: boolean; meaning: string; status?: number }>)[code];
    if (spec) return { group, retriable: spec.retriable, status: spec.status, meaning: spec.meaning };
  }
  return undefined;
}

/** Every catalogued code by group, for the generated docs and the tests that check them. */
export function catalogue(): readonly {
  group: ErrorCodeFacts['group'];
  code: string;
  facts: ErrorCodeFacts;
}[] {
  const all: { group: ErrorCodeFacts['group']; code: string; facts: ErrorCodeFacts }[] = [];
  for (const [group, codes] of GROUPS) {
    for (const code of Object.keys(codes)) {
      const facts = errorCodeFacts(code);
      if (facts) all.push({ group, code, facts });
    }
  }
  return all;
}

export { API_ERROR_CODES, PAGE_ERROR_CODES, PROTOCOL_ERROR_CODES, SERVICE_ERROR_CODES };
export type { ApiErrorCode, PageErrorCode, ProtocolErrorCode, ServiceErrorCode };
export { httpStatusCode, isRetriablePageError, pageErrorSpec } from './page.js';

/** A code from another process or version: itself when the catalogue knows it, else `fallback`. */
export function toErrorCode(value: unknown, fallback: ErrorCode): ErrorCode {
  return typeof value === 'string' && errorCodeFacts(value) !== undefined ? (value as ErrorCode) : fallback;
}

/** The HTTP status an API answers `code` with. */
export function apiStatus(code: ApiErrorCode): number {
  return API_ERROR_CODES[code].status;
}
