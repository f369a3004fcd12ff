import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** People's API tokens start so, which tells them from the cluster token (hex) at a glance. */
export const TOKEN_PREFIX = 'ackp_';

/** A new bearer token: 256 random bits. */
export function generateSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** What the store keeps of a token: its SHA-256, hex. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Two hex digests compared in constant time (false when either is not a SHA-256). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
