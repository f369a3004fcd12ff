import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * True when an `Authorization` header carries `Bearer <token>`. Both sides are hashed first, so
 * the comparison takes the same time whatever the given value's length or content.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  const given = match?.[1] ?? '';
  // Compared even when absent, so a missing header costs what a wrong one does.
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

/** The token of an `Authorization: Bearer <token>` header, or null when there is none. */
export function bearerToken(authorization: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return match?.[1] ?? null;
}
