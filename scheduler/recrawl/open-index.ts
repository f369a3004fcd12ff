import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../../shared/logger.js';
import type { SchedulerConfig } from '../config.js';
import { stateHomeOf } from '../state-home.js';
import { ValidatorsIndex } from './validators-index.js';

export const RECRAWL_INDEX_FILE = 'recrawl-index.sqlite';

/**
 * The scheduler's recrawl index (docs/recrawl.md), or null when it is turned off or cannot be
 * opened: a scheduler without one fetches every page in full, which is correct, only slower.
 */
export function openRecrawlIndex(
  config: Pick<
    SchedulerConfig,
    'recrawlIndex' | 'recrawlIndexMaxEntries' | 'dataDir' | 'outDir' | 'frontier'
  >,
  logger: Logger,
): ValidatorsIndex | null {
  if (config.recrawlIndex === 'off') return null;
  const path = resolve(config.recrawlIndex ?? join(stateHomeOf(config), RECRAWL_INDEX_FILE));
  try {
    mkdirSync(dirname(path), { recursive: true });
    return new ValidatorsIndex({ path, maxEntries: config.recrawlIndexMaxEntries });
  } catch (err) {
    logger.warn({ err, path }, 'the recrawl index cannot be opened; every page is fetched in full');
    return null;
  }
}
