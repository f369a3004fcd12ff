import { fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import { compiledScript } from '../paths.js';
import type { SiteStats } from '../site/generated-site.js';

export interface SiteProcess {
  url: string;
  pid: number;
  /** Zeroes the counters, so the next stats() covers one runner only. */
  resetStats(): Promise<SiteStats>;
  stats(): Promise<SiteStats>;
  close(): Promise<void>;
}

/**
 * Starts the generated site in its own process (dist/scripts/site/serve.js), so its CPU and memory
 * stay out of the figures measured for the crawler's process tree.
 */
export async function startSiteProcess(options: { pages: number; seed: number }): Promise<SiteProcess> {
  const child = fork(
    compiledScript('site/serve.js'),
    ['--pages', String(options.pages), '--seed', String(options.seed)],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  let closing = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!closing) process.stderr.write(`site process exited unexpectedly (${signal ?? `code ${code}`})\n`);
      resolve();
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`site process exited early (code ${code})`)));
    const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
  });

  const ask = (type: 'stats' | 'reset-stats'): Promise<SiteStats> =>
    new Promise((resolve, reject) => {
      if (!child.connected) return reject(new Error('the site process is gone'));
      child.once('message', (message: { stats: SiteStats }) => resolve(message.stats));
      child.send({ type }, (error) => error && reject(error));
    });

  return {
    url,
    pid: child.pid as number,
    resetStats: () => ask('reset-stats'),
    stats: () => ask('stats'),
    async close() {
      closing = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
