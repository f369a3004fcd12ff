import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, errorMessage } from '../../shared/errors.js';
import { createFileAtomic } from '../../shared/files/atomic-write.js';

/** Where a scheduler keeps its id, so that a restart (even after kill -9) is the same scheduler. */
export const SCHEDULER_ID_FILE = 'scheduler-id';

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * This scheduler's id in SQL (`runs.schedulerId`): the configured one, else the one kept in
 * `<dataDir>/scheduler-id`, created at the first start (`<host>-<random>`). Two schedulers racing
 * to create it both end with the winner's id.
 */
export function schedulerIdFor(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined) return configured;
  const path = join(resolve(dataDir), SCHEDULER_ID_FILE);
  if (!existsSync(path)) {
    const host =
      hostname()
        .replace(/[^A-Za-z0-9.-]/g, '-')
        .slice(0, 80) || 'scheduler';
    mkdirSync(resolve(dataDir), { recursive: true });
    createFileAtomic(path, `${host}-${randomUUID().slice(0, 8)}\n`, { mode: 0o644 });
  }
  let id: string;
  try {
    id = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError([`scheduler id file ${path} cannot be read (${errorMessage(err)})`]);
  }
  if (!ID_PATTERN.test(id)) {
    throw new ConfigError([
      `scheduler id file ${path} does not hold an id (1-128 of A-Z a-z 0-9 . _ -): delete it, or set ACKCRAWL_SCHEDULER_ID`,
    ]);
  }
  return id;
}

export const schedulerIdPattern = ID_PATTERN;
