import { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import type { WireCookie } from './wire-cookie.js';

/**
 * A crawl's own cookies (`cookies`): every fetch of the run starts with them, as a browser that is
 * logged in, so a site behind a login is crawled with the session cookie copied from a browser. A
 * cookie goes where a browser would send it: to its domain (a leading dot: and its subdomains), on
 * its path, over HTTPS only when `secure`. What a site sets on top is the fetch's (or the run's
 * session's, with `sessionCookies`), and wins over the fixed one of the same name for as long as it
 * is kept.
 */

/** RFC 6265's cookie-name (a token) and cookie-value (cookie-octets). */
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;
/** A host name or IPv4 address; with a leading dot, a domain of at least two labels. */
const COOKIE_DOMAIN = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\.[a-z0-9_-]+(?:\.[a-z0-9_-]+)+)$/i;

export const MAX_FIXED_COOKIES = 50;

export const fixedCookieSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(256)
      .regex(COOKIE_NAME, "a cookie name (letters, digits and !#$%&'*+.^_`|~-)"),
    value: z
      .string()
      .max(4096)
      .regex(COOKIE_VALUE, 'a cookie value (no spaces, quotes, commas, semicolons or backslashes)'),
    /** `example.com`: that host only; `.example.com`: it and its subdomains (as a browser lists them). */
    domain: z
      .string()
      .min(1)
      .max(255)
      .regex(
        COOKIE_DOMAIN,
        'a host name (example.com: that host) or a domain (.example.com: and its subdomains)',
      ),
    path: z
      .string()
      .max(1024)
      .regex(/^\/[^\s;]*$/, 'a path starting with /')
      .default('/'),
    /** Sent over HTTPS only. */
    secure: z.boolean().default(false),
  })
  .strict();
export type FixedCookie = z.infer<typeof fixedCookieSchema>;

export const fixedCookiesSchema = z
  .array(fixedCookieSchema)
  .max(MAX_FIXED_COOKIES)
  .superRefine((cookies, ctx) => {
    const seen = new Set<string>();
    cookies.forEach((cookie, i) => {
      const key = `${cookie.domain.toLowerCase()} ${cookie.path} ${cookie.name}`;
      if (seen.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `${cookie.name} is given twice for ${cookie.domain}${cookie.path === '/' ? '' : cookie.path}`,
        });
      }
      seen.add(key);
    });
  });

const LINE = /^(\S+)\s+([^=\s;]+)=([^;]*?)\s*((?:;[^;]*)*)$/;

/**
 * One cookie as text: `domain name=value`, optionally followed by `; Path=/p` and `; Secure`
 * (`.example.com sid=abc123; Secure`).
 * @throws InvalidInputError `BAD_COOKIE` when the line is not that, or its parts are invalid; the
 *   message never holds the value.
 */
export function parseFixedCookie(text: string): FixedCookie {
  const line = text.trim();
  const found = LINE.exec(line);
  // Never the value: up to the first `=` of a line that is not a cookie.
  const shown = found ? `${found[1]} ${found[2]}=…` : (/^[^=\s]{1,100}/.exec(line)?.[0] ?? '');
  const bad = (why: string): InvalidInputError =>
    new InvalidInputError('BAD_COOKIE', `cookie "${shown}": ${why}`);
  if (!found) throw bad('write it as "domain name=value" (.example.com sid=abc; Path=/; Secure)');
  const raw: Record<string, unknown> = { domain: found[1], name: found[2], value: found[3] };
  for (const attribute of (found[4] ?? '')
    .split(';')
    .map((a) => a.trim())
    .filter(Boolean)) {
    const [key = '', ...rest] = attribute.split('=');
    if (key.toLowerCase() === 'secure' && rest.length === 0) raw.secure = true;
    else if (key.toLowerCase() === 'path' && rest.length > 0) raw.path = rest.join('=');
    else throw bad(`unknown attribute "${attribute.slice(0, 40)}" (use Path=/p, Secure)`);
  }
  const parsed = fixedCookieSchema.safeParse(raw);
  if (!parsed.success) throw bad(parsed.error.issues.map((issue) => issue.message).join('; '));
  return parsed.data;
}

/** The run's cookies as a fetch's jar takes them (session cookies: they never expire in the run). */
export function wireOfFixed(cookie: FixedCookie): WireCookie {
  const hostOnly = !cookie.domain.startsWith('.');
  return {
    name: cookie.name,
    value: cookie.value,
    domain: (hostOnly ? cookie.domain : cookie.domain.slice(1)).toLowerCase(),
    path: cookie.path,
    expires: null,
    hostOnly,
    secure: cookie.secure,
    httpOnly: false,
  };
}
