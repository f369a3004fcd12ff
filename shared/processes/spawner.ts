import { spawn } from 'node:child_process';
import type { Spawner } from './process-manager.js';

/**
 * V8 flags for crawler processes. A crawler allocates fast and briefly (bodies, records, frames):
 * an 8 MiB young generation instead of V8's default keeps its RSS near 140 MB at a few percent of
 * CPU (npm run bench measures both).
 */
export const CRAWLER_NODE_FLAGS = ['--max-semi-space-size=8'];

/**
 * Spawns `node <script>` with the agent's environment plus a crawler id per slot; render slots get
 * the render capability (ACKCRAWL_CAN_RENDER). The IPC channel carries the crawler's stats.
 */
export function nodeSpawner(script: string, env: NodeJS.ProcessEnv, idPrefix: string): Spawner {
  return (slot, render) =>
    spawn(process.execPath, [...CRAWLER_NODE_FLAGS, script], {
      // The agent's own config file is not the crawler's: crawlers take the environment only.
      env: {
        ...env,
        ACKCRAWL_CONFIG: undefined,
        ACKCRAWL_CRAWLER_ID: `${idPrefix}-${render ? 'render-' : ''}${slot}-${Date.now().toString(36)}`,
        ...(render ? { ACKCRAWL_CAN_RENDER: 'true' } : {}),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
}
