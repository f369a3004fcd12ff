import { fileURLToPath } from 'node:url';

/**
 * Where each role's entry point is, relative to this compiled file. Roles are started as processes
 * (never imported): master/ only knows their paths, so the services stay independent.
 */
export const roleScripts = {
  master: fileURLToPath(new URL('../main.js', import.meta.url)),
  scheduler: fileURLToPath(new URL('../../scheduler/main.js', import.meta.url)),
  agent: fileURLToPath(new URL('../../client/agent/main.js', import.meta.url)),
  crawler: fileURLToPath(new URL('../../client/crawler/main.js', import.meta.url)),
  archiver: fileURLToPath(new URL('../../client/archiver/main.js', import.meta.url)),
} as const;

export type RoleName = keyof typeof roleScripts;
