import { errorCodeFacts } from '../error-codes/index.js';

/** The status class of an HTTP status: `2xx` … `5xx`; `none` when no response arrived. */
export function statusClass(status: number | null | undefined): string {
  if (status === null || status === undefined || status < 100 || status > 599) return 'none';
  return `${Math.floor(status / 100)}xx`;
}

const HTTP_CODE = /^HTTP_[1-5]\d\d$/;

/**
 * An error code as a label value: a code of the catalogue, or `HTTP_<status>`; anything else (a
 * crawler of another version, a bug) is `OTHER`, so a peer cannot grow the series without bound.
 */
export function errorCodeLabel(code: string): string {
  if (code.startsWith('HTTP_')) return HTTP_CODE.test(code) ? code : 'OTHER';
  return errorCodeFacts(code) !== undefined ? code : 'OTHER';
}
