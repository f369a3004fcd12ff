import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { createFileAtomic } from '../files/atomic-write.js';
import { MIN_TOKEN_LENGTH } from './cluster-token.js';

/**
 * The agent credential: one secret shared by the master and its host agents (not a person's API
 * token, not the crawlers' cluster token). Agents present it to the master (register, heartbeat)
 * and the master to agents (their API). ACKCRAWL_AGENT_TOKEN, or else `<dataDir>/agent-token`
 * (0600), which a master started without one creates at its first start. The master keeps only
 * its SHA-256.
 */
export const AGENT_TOKEN_FILE = 'agent-token';

/** Agent credentials start so: they tell themselves from people's tokens (`ackp_`) at a glance. */
export const AGENT_TOKEN_PREFIX = 'acka_';

export function agentTokenPath(dataDir: string): string {
  return join(resolve(dataDir), AGENT_TOKEN_FILE);
}

function checked(token: string, where: string): string {
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new ConfigError([
      `${where}: an agent token is one word of at least ${MIN_TOKEN_LENGTH} characters`,
    ]);
  }
  return token;
}

function readAgentTokenFile(dataDir: string): string | null {
  const path = agentTokenPath(dataDir);
  if (!existsSync(path)) return null;
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError([
      `agent token file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): run as its owner, or set ACKCRAWL_AGENT_TOKEN`,
    ]);
  }
  return checked(text, `agent token file ${path}`);
}

/** The master's agent token: the configured one, else the file's, else a new one written there. */
export function masterAgentToken(
  configured: string | undefined,
  dataDir: string,
): { token: string; source: 'config' | 'file' | 'created'; path: string } {
  const path = agentTokenPath(dataDir);
  if (configured !== undefined && configured !== '') {
    return { token: checked(configured, 'ACKCRAWL_AGENT_TOKEN'), source: 'config', path };
  }
  const existing = readAgentTokenFile(dataDir);
  if (existing !== null) return { token: existing, source: 'file', path };
  const fresh = AGENT_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  if (createFileAtomic(path, `${fresh}\n`, { mode: 0o600 })) return { token: fresh, source: 'created', path };
  return { token: readAgentTokenFile(dataDir) ?? fresh, source: 'file', path };
}

/** The token an agent presents: the configured one, else the master's file in the same data dir. */
export function agentCredential(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined && configured !== '') return checked(configured, 'ACKCRAWL_AGENT_TOKEN');
  const found = readAgentTokenFile(dataDir);
  if (found !== null) return found;
  throw new ConfigError([
    `agentToken (ACKCRAWL_AGENT_TOKEN): not set, and there is no agent token file at ${agentTokenPath(dataDir)}. ` +
      "Set ACKCRAWL_AGENT_TOKEN to the master's agent token (the master writes it to <dataDir>/agent-token " +
      'at its first start when it is not set), or ACKCRAWL_DATA_DIR to the master’s data folder',
  ]);
}
