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

/** A site script run in its own process: what it printed once listening, and its counters. */
export interface ForkedSite<Ready, Stats> {
  ready: Ready;
  pid: number;
  resetStats(): Promise<Stats>;
  stats(): Promise<Stats>;
  close(): Promise<void>;
}

/**
 * Starts the generated site in its own process (dist/scripts/site/serve.js), so its CPU and memory
 * stay out of the figures measured for the crawler's process tree.
 */
export async function startSiteProcess(options: {
  pages: number;
  seed: number;
  redirectLinks?: boolean;
  /** A robots.txt disallowing this path (no page is under it). */
  disallow?: string;
}): Promise<SiteProcess> {
  const site = await forkSite<{ url: string }, SiteStats>('site/serve.js', [
    '--pages',
    String(options.pages),
    '--seed',
    String(options.seed),
    ...(options.redirectLinks ? ['--redirect-links'] : []),
    ...(options.disallow === undefined ? [] : ['--disallow', options.disallow]),
  ]);
  return {
    url: site.ready.url,
    pid: site.pid,
    resetStats: site.resetStats,
    stats: site.stats,
    close: site.close,
  };
}

/**
 * Forks a site script (a path under dist/scripts) that prints one JSON line on stdout once
 * listening and answers `{type:'stats'}` and `{type:'reset-stats'}` over IPC with `{stats}`.
 */
export async function forkSite<Ready, Stats>(
  script: string,
  args: string[],
): Promise<ForkedSite<Ready, Stats>> {
  const child = fork(compiledScript(script), args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let closing = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!closing) process.stderr.write(`site process exited unexpectedly (${signal ?? `code ${code}`})\n`);
      resolve();
    }),
  );
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`site process exited early (code ${code})`)));
    const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
    lines.once('line', (line) => resolve(JSON.parse(line) as Ready));
  });

  const ask = (type: 'stats' | 'reset-stats'): Promise<Stats> =>
    new Promise((resolve, reject) => {
      if (!child.connected) return reject(new Error('the site process is gone'));
      child.once('message', (message: { stats: Stats }) => resolve(message.stats));
      child.send({ type }, (error) => error && reject(error));
    });

  return {
    ready,
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
