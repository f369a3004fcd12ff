import { statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/, from this compiled file (dist/shared/processes/). */
const DIST = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The script to start a role's process from: its single-file bundle (dist/bundle/<same path>, made
 * by `npm run build`, see scripts/bundle-roles.mjs) when there is one at least as new as the
 * compiled entry point, else that entry point. A bundle starts faster: Node resolves, reads and links
 * one file instead of some 300, which took a scheduler or a crawler 0.5-0.9 s of CPU on start
 * (docs/capacity.md). A bundle older than its entry point is stale (`tsc` ran without the bundling
 * step) and is not used.
 */
export function processScript(entry: string, dist: string = DIST): string {
  const rel = relative(dist, entry);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return entry;
  const bundle = join(dist, 'bundle', rel);
  const bundled = mtimeOf(bundle);
  const compiled = mtimeOf(entry);
  return bundled !== null && compiled !== null && bundled >= compiled ? bundle : entry;
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}
