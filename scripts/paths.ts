import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Where things are, seen from a compiled script (dist/scripts/…). Scripts are run as
 * `node dist/scripts/x/main.js` from any directory, so nothing here relies on the working directory.
 */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A compiled script by its path under dist/scripts, e.g. `site/serve.js`. */
export function compiledScript(relative: string): string {
  return fileURLToPath(new URL(relative, import.meta.url));
}

/** The ackcrawl command line, once built. */
export const ackcrawlCli = fileURLToPath(new URL('../master/cli/main.js', import.meta.url));

export function ackcrawlCliBuilt(): boolean {
  return existsSync(ackcrawlCli);
}
