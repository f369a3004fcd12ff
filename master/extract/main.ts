import { loadConfig } from '../../shared/config/load.js';
import { exitOnFault } from '../../shared/lifecycle/faults.js';
import { onShutdownSignal } from '../../shared/lifecycle/signals.js';
import { createLogger } from '../../shared/logger.js';
import { extractConfigSchema } from './config.js';
import { startExtract } from './run-extract.js';

/**
 * Composition root of `ackcrawl extract`: reads the config once, starts the reader, and on
 * SIGTERM or SIGINT lets the chunk in hand commit before it exits. `overrides` are the command
 * line's (they win over the environment and the config file).
 */
export async function main(
  env: Record<string, string | undefined> = process.env,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const config = loadConfig(extractConfigSchema, env, overrides);
  const logger = createLogger({ name: 'extract', level: config.logLevel });
  exitOnFault(logger);
  // Listened for before the start: a signal while it connects closes what started, once it has.
  const starting = startExtract(config, { logger });
  onShutdownSignal(logger, async () => (await starting).close(), config.extractShutdownMs);
  const handle = await starting;
  await handle.done;
  await handle.close();
}
