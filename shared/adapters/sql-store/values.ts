import { InvalidInputError } from '../../errors.js';
import {
  PROCESS_STATES,
  RUN_STATES,
  TOKEN_SCOPES,
  type PageQuery,
  type ProcessState,
  type RunState,
  type TokenScope,
} from '../../ports/sql-store.js';
import { KEY_LENGTHS } from './migrations.js';

/**
 * Checks on what the store is handed, made before any SQL runs so that every dialect answers the
 * same way (SQLite would store an over-long id that PostgreSQL and SQL Server refuse).
 */
export function key(field: string, value: string, max: number = KEY_LENGTHS.id): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `${field} must be 1 to ${max} characters`, {
      details: { field },
    });
  }
  return value;
}

export function optionalKey(
  field: string,
  value: string | null,
  max: number = KEY_LENGTHS.id,
): string | null {
  return value === null ? null : key(field, value, max);
}

/** Free text (URLs, error messages): PostgreSQL text cannot hold NUL, so it becomes U+FFFD everywhere. */
export function text(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

export function optionalText(value: string | null): string | null {
  return value === null ? null : text(value);
}

export function whole(field: string, value: number): number {
  if (!Number.isSafeInteger(value)) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `${field} must be a whole number`, {
      details: { field },
    });
  }
  return value;
}

/** A count: a whole number, 0 or more. */
export function tally(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `${field} must be a whole number, 0 or more`, {
      details: { field },
    });
  }
  return value;
}

export function optionalWhole(field: string, value: number | null): number | null {
  return value === null ? null : whole(field, value);
}

export function finite(field: string, value: number): number {
  if (!Number.isFinite(value)) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `${field} must be a finite number`, {
      details: { field },
    });
  }
  return value;
}

export function state(value: RunState): RunState {
  if (!(RUN_STATES as readonly string[]).includes(value)) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `unknown run state '${String(value).slice(0, 40)}'`, {
      details: { field: 'state' },
    });
  }
  return value;
}

export function processState(value: ProcessState): ProcessState {
  if (!(PROCESS_STATES as readonly string[]).includes(value)) {
    throw new InvalidInputError(
      'SQL_INVALID_VALUE',
      `unknown process state '${String(value).slice(0, 40)}'`,
      { details: { field: 'state' } },
    );
  }
  return value;
}

export function scopes(values: readonly TokenScope[]): TokenScope[] {
  for (const s of values) {
    if (!(TOKEN_SCOPES as readonly string[]).includes(s)) {
      throw new InvalidInputError('SQL_INVALID_VALUE', `unknown token scope '${String(s).slice(0, 40)}'`, {
        details: { field: 'scopes' },
      });
    }
  }
  return [...new Set(values)];
}

/** Settings and result data: JSON text, `null` for undefined. */
export function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** The port's 1..500 (default 50): out-of-range limits are clamped, not refused. */
export function limitOf(query: PageQuery | undefined): number {
  const limit = query?.limit;
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** A value of a closed set (a rule kind, a delivery state). */
export function oneOf<T extends string>(field: string, value: T, allowed: readonly T[]): T {
  if (!allowed.includes(value)) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `unknown ${field} '${String(value).slice(0, 40)}'`, {
      details: { field },
    });
  }
  return value;
}
