import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * Keep-alive agents. Unless private addresses are allowed, the agents check the address actually
 * connected to (after DNS, and for IP literals), so a hostname that resolves to 127.0.0.1 or
 * 169.254.169.254 is refused however it was spelled.
 */
export function createAgents(options: { allowPrivate: boolean; maxSockets?: number }): Agents {
  const common = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 256,
    maxFreeSockets: 64,
    scheduling: 'lifo' as const,
  };
  if (options.allowPrivate) {
    return { http: new http.Agent(common), https: new https.Agent(common) };
  }
  const filter = { allowPrivateIPAddress: false, allowMetaIPAddress: false };
  return {
    http: new RequestFilteringHttpAgent({ ...common, ...filter }),
    https: new RequestFilteringHttpsAgent({ ...common, ...filter }),
  };
}
