import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientToken } from '../../shared/config/cluster-token.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';
import { createLogger } from '../../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../../shared/lifecycle/signals.js';
import { exitOnFault } from '../../shared/lifecycle/faults.js';
import { agentConfigSchema, killAfterMs } from './config.js';
import { nodeSpawner, ProcessManager } from './process-manager.js';

const CRAWLER_SCRIPT = fileURLToPath(new URL('../crawler/main.js', import.meta.url));

/** Composition root of the per-host agent: keeps this host's crawler processes running. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(agentConfigSchema, env);
  // Crawlers without a token would only be refused: say what to set now, not once per crawler.
  clientToken(config.token, config.dataDir);
  const logger = createLogger({ name: 'agent', level: config.logLevel });
  // A token from the token file is read by each crawler as it starts, so a new one is picked up.
  const crawlerEnv: NodeJS.ProcessEnv = {
    ...env,
    ACKCRAWL_DATA_DIR: resolve(config.dataDir),
    ...(config.token ? { ACKCRAWL_TOKEN: config.token } : {}),
  };
  exitOnFault(logger);
  const stopTimeoutMs = killAfterMs(config);
  const manager = new ProcessManager({
    // Slots past `processes` are the render-capable ones.
    spawn: nodeSpawner(
      CRAWLER_SCRIPT,
      crawlerEnv,
      `${hostname()}-${process.pid}`,
      (slot) => slot >= config.processes,
    ),
    logger,
    stopTimeoutMs,
    maxRestartsPerMinute: config.maxRestartsPerMinute,
  });
  onShutdownSignal(logger, () => manager.stop(), stopTimeoutMs + 5_000);
  manager.scale(config.processes + config.renderProcesses);
  logger.info({ processes: config.processes, renderProcesses: config.renderProcesses }, 'agent running');
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`ackcrawl agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
