import { createHostPolicy, type HostPolicy } from '../../shared/http/request-guards.js';
import type { AgentConfig } from './config.js';

/**
 * The Host names the agent's API answers: loopback ones, the host of `agentUrl` (the name the
 * master was told to use), `agentAllowedHosts`, and, off loopback, IPs and this host's name.
 */
export function agentHostPolicy(
  config: Pick<AgentConfig, 'agentHost' | 'agentUrl' | 'agentAllowedHosts'>,
): HostPolicy {
  const own = config.agentUrl ? [new URL(config.agentUrl).hostname.replace(/^\[|\]$/g, '')] : [];
  return createHostPolicy({
    listenHost: config.agentHost,
    allowedHosts: [...config.agentAllowedHosts, ...own],
    service: 'agent',
    setting: 'ACKCRAWL_AGENT_ALLOWED_HOSTS',
  });
}
