import { spawn } from 'node:child_process';
import { CRAWLER_NODE_FLAGS, roleProcessEnv } from './node-flags.js';
import type { Spawner } from './process-manager.js';

/**
 * Spawns `node <script>` with the agent's environment plus a crawler id per slot; render slots get
 * the render capability (ACKCRAWL_CAN_RENDER). The IPC channel carries the crawler's stats.
 */
export function nodeSpawner(script: string, env: NodeJS.ProcessEnv, idPrefix: string): Spawner {
  return (slot, render) =>
    spawn(process.execPath, [...CRAWLER_NODE_FLAGS, script], {
      // The agent's own config file is not the crawler's: crawlers take the environment only.
      env: {
        ...roleProcessEnv(env),
        ACKCRAWL_CONFIG: undefined,
        ACKCRAWL_CRAWLER_ID: `${idPrefix}-${render ? 'render-' : ''}${slot}-${Date.now().toString(36)}`,
        // Who must be its parent: a crawler whose spawner died before it started stops too.
        ACKCRAWL_SUPERVISOR_PID: String(process.pid),
        ...(render ? { ACKCRAWL_CAN_RENDER: 'true' } : {}),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
}
