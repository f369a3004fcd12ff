import { InvalidInputError } from '../../errors.js';

/**
 * Page cursors: the sort key of a page's last row, with the list it came from, as base64url JSON.
 * Opaque to callers; a cursor of another list, or anything that is not one, is SQL_BAD_CURSOR.
 */
type Part = 'number' | 'string';

export function encodeCursor(list: string, values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([list, ...values]), 'utf8').toString('base64url');
}

export function decodeCursor<const P extends readonly Part[]>(
  list: string,
  cursor: string,
  parts: P,
): { [K in keyof P]: P[K] extends 'number' ? number : string } {
  const bad = (): InvalidInputError =>
    new InvalidInputError('SQL_BAD_CURSOR', `not a cursor of this list (${list})`, {
      details: { field: 'after' },
    });
  let decoded: unknown;
  try {
    if (cursor.length > 2_000) throw bad();
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(decoded) || decoded.length !== parts.length + 1 || decoded[0] !== list) throw bad();
  const values = decoded.slice(1);
  values.forEach((value, i) => {
    const ok = parts[i] === 'number' ? Number.isSafeInteger(value) : typeof value === 'string';
    if (!ok) throw bad();
  });
  return values as { [K in keyof P]: P[K] extends 'number' ? number : string };
}

/** First-page bounds: below (ascending) or above (descending) every stored key. */
export const LOWEST = { number: Number.MIN_SAFE_INTEGER, string: '' } as const;
export const HIGHEST = { number: Number.MAX_SAFE_INTEGER, string: '' } as const;
