import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type Resolved =
  | { address: string; family: 4 | 6 }
  | { blocked: string }
  /** The lookup failed: `code` is the resolver's (ENOTFOUND, EAI_AGAIN). */
  | { failed: string };

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }>;

/**
 * The address rule of the crawler's fetch agents (request-filtering-agent) for the browser's
 * traffic: only public unicast addresses, so loopback, private, link-local (cloud metadata),
 * multicast and unspecified addresses are refused, including IPv4-mapped IPv6 forms.
 */
export function isPublicAddress(address: string): boolean {
  try {
    return ipaddr.process(address).range() === 'unicast';
  } catch {
    return false;
  }
}

/**
 * Resolves a host once and checks the address; the caller connects to exactly that address, so a
 * name that resolves differently a moment later (DNS rebinding) cannot slip past the check.
 */
export async function resolvePublic(hostname: string, dnsLookup: Lookup = lookup): Promise<Resolved> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  let address = bare;
  let family = isIP(bare);
  if (family === 0) {
    try {
      ({ address, family } = await dnsLookup(bare));
    } catch (err) {
      return { failed: (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND' };
    }
  }
  if (!isPublicAddress(address)) return { blocked: `${bare} is ${address}, not a public address` };
  return { address, family: family === 6 ? 6 : 4 };
}
