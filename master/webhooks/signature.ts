import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` + base64
 * of random bytes; the signed content is `<webhook-id>.<webhook-timestamp>.<body>`; the
 * `webhook-signature` header is `v1,` + base64 of its HMAC-SHA256 keyed by the decoded bytes.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: 24 random bytes (the spec asks for 24 to 64). */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** A message id: the same on every attempt of one delivery, so receivers can drop repeats. */
export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one attempt (the timestamp is the attempt's, so a retry is not stale). */
export function webhookHeaders(
  secret: string,
  id: string,
  nowMs: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(secret, id, timestamp, body),
  };
}
