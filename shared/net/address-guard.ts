import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

/**
 * The address guard of everything ackcrawl sends out on someone else's say-so: the crawler's
 * fetches (client/crawler/fetch) and the master's webhooks (master/webhooks). One rule, so the
 * two cannot drift: only global unicast addresses, unless private ones are allowed.
 */

/** Why an address is refused (private, loopback, link-local, meta…), or null when it is global unicast. */
export function blockedReason(address: string): string | null {
  const range = ipaddr.parse(address).range();
  if (range === 'unspecified') return 'a meta address';
  if (range !== 'unicast') return `a ${range} address`;
  return null;
}

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export interface AgentOptions {
  /** Fetch private, loopback, link-local and unspecified addresses too. */
  allowPrivate: boolean;
  /** With allowPrivate off: these IPs or CIDRs are fetched anyway; nothing else private is. */
  allowAddresses?: readonly string[];
  maxSockets?: number;
}

/**
 * Keep-alive agents. Unless private addresses are allowed, the agents check the address actually
 * connected to (after DNS, and for IP literals, redirects included), before connecting, so a
 * hostname that resolves to 127.0.0.1 or 169.254.169.254 is refused however it was spelled.
 * `allowAddresses` lets exact IPs or CIDRs through (matched as written: allowing `127.0.0.1` does
 * not allow `::ffff:127.0.0.1` or `0.0.0.0`).
 */
export function createAgents(options: AgentOptions): Agents {
  const common = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 256,
    maxFreeSockets: 64,
    scheduling: 'lifo' as const,
  };
  if (options.allowPrivate) {
    return { http: new http.Agent(common), https: new https.Agent(common) };
  }
  const filter = {
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    allowIPAddressList: [...(options.allowAddresses ?? [])],
  };
  return {
    http: new RequestFilteringHttpAgent({ ...common, ...filter }),
    https: new RequestFilteringHttpsAgent({ ...common, ...filter }),
  };
}
