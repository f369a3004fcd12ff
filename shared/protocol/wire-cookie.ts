import { z } from 'zod';

/** Cookies a task is sent, or an outcome returns, at most (RFC 6265 asks a client for 50 a domain). */
export const MAX_WIRE_COOKIES = 100;

/**
 * A cookie between scheduler and crawler, for runs that keep a session per host
 * (`sessionCookies`): the crawler's jar set it from a response (tough-cookie checked its domain,
 * path and public suffix there), the scheduler keeps it, and the host's next tasks start with it.
 */
export const wireCookieSchema = z.object({
  name: z.string().max(4096),
  value: z.string().max(4096),
  /** Lower case, without a leading dot. */
  domain: z.string().min(1).max(255),
  path: z.string().min(1).max(1024),
  /** Epoch ms; null: a session cookie (kept as long as the run's session). At or before now: deleted. */
  expires: z.number().nullable(),
  /** Sent to `domain` only, not its subdomains (the response set no Domain attribute). */
  hostOnly: z.boolean(),
  secure: z.boolean(),
  httpOnly: z.boolean(),
  sameSite: z.enum(['strict', 'lax', 'none']).optional(),
});
export type WireCookie = z.infer<typeof wireCookieSchema>;

export const wireCookiesSchema = z.array(wireCookieSchema).max(MAX_WIRE_COOKIES);
