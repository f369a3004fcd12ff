import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { blockedReason } from '../../../shared/net/address-guard.js';
import { FetchError } from './fetch-error.js';

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The address check for requests that go through a proxy. There the proxy, not this process,
 * connects to the target, so the connected-address check of the direct agents never sees it:
 * instead the target's name is resolved here and the request is refused before it is handed to
 * the proxy if any address is private, loopback, link-local or otherwise not global unicast.
 * Resolves with the checked addresses (a SOCKS proxy that takes addresses is given one of them).
 */
export async function checkTarget(
  hostname: string,
  lookup: LookupAll = systemLookup,
): Promise<{ address: string; family: number }[]> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(bare) !== 0) {
    addresses = [{ address: bare, family: isIP(bare) }];
  } else {
    try {
      addresses = await lookup(bare);
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new FetchError(
        code === 'ENOTFOUND' ? 'DNS_NOT_FOUND' : 'DNS_FAILURE',
        `cannot resolve ${bare}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  for (const { address } of addresses) {
    const reason = blockedReason(address);
    if (reason) {
      throw new FetchError(
        'ADDRESS_BLOCKED',
        `refused to send ${bare} through a proxy: it resolves to ${address}, ${reason}`,
      );
    }
  }
  return addresses;
}
