import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../paths.js';

export interface ReferenceRun {
  version: string;
  /** htmlPath → trafilatura's main text. */
  texts: Record<string, string>;
  cpuSeconds: number;
  pages: number;
}

/**
 * trafilatura on the same files, in the venv that trafilatura-venv.sh installs under .cache/ (made
 * on first use: a minute, from PyPI). Throws with pip's or Python's message when it cannot run.
 */
export function runTrafilatura(htmlPaths: readonly string[], rounds: number): ReferenceRun {
  const here = join(repoRoot, 'scripts', 'bench', 'extract');
  const python = execFileSync('bash', [join(here, 'trafilatura-venv.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const run = spawnSync(python, [join(here, 'trafilatura_extract.py'), String(rounds)], {
    input: JSON.stringify(htmlPaths),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0)
    throw new Error(`trafilatura failed (exit ${run.status}): ${run.stderr.slice(-2_000)}`);
  return JSON.parse(run.stdout) as ReferenceRun;
}
