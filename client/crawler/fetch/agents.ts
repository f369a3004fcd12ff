/** The crawler's agents are the shared address guard's (shared/net/address-guard.ts). */
export { createAgents, type AgentOptions, type Agents } from '../../../shared/net/address-guard.js';
