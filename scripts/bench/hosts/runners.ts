import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ackcrawlCli, ackcrawlCliBuilt, compiledScript } from '../../paths.js';
import type { RunnerSpec } from '../runners.js';
import type { HostsBenchOptions } from './options.js';

/** What each runner enforces of the crawl's politeness; printed under the table. */
export const ENFORCES: Record<string, string> = {
  ackcrawl: 'host concurrency and start-to-start delay, per host:port, in the scheduler',
  crawlee: 'sameDomainDelaySecs only (per registrable domain: none for IP hosts), no per-host concurrency',
  bare: 'nothing',
};

/**
 * The runs of the many-hosts bench, in the order of `--only`: every runner gets every host's `/`
 * as a seed and the same total concurrency; ackcrawl and Crawlee are given the politeness too.
 */
export function planHostsRunners(o: HostsBenchOptions, seeds: readonly string[]): RunnerSpec[] {
  const urls = seeds.flatMap((url) => ['--url', url]);
  const concurrency = String(o.totalConcurrency);
  return o.only.map((kind): RunnerSpec => {
    if (kind === 'ackcrawl') {
      return {
        name: 'ackcrawl',
        kind,
        keeps: 'every page with its body, durably on disk',
        ...(ackcrawlCliBuilt() ? {} : { skip: 'dist/master/cli/main.js is not built yet' }),
        prepare() {
          const out = mkdtempSync(join(tmpdir(), 'ackcrawl-bench-hosts-'));
          const perProcess = Math.ceil(o.totalConcurrency / o.ackProcesses);
          const args = [ackcrawlCli, 'crawl', ...seeds, '--out', out, '--allow-private', '--json'];
          args.push('--processes', String(o.ackProcesses), '--concurrency', String(perProcess));
          args.push('--host-concurrency', String(o.hostConcurrency), '--host-delay', String(o.hostDelayMs));
          return { args, cleanup: () => rmSync(out, { recursive: true, force: true }) };
        },
      };
    }
    if (kind === 'crawlee') {
      return {
        name: 'crawlee',
        kind,
        keeps: 'nothing durable (in-memory request queue, no dataset)',
        prepare: () => ({
          args: [compiledScript('bench/crawlee-runner.js'), ...urls, '--concurrency', concurrency].concat([
            '--same-domain-delay-ms',
            String(o.hostDelayMs),
          ]),
          cleanup: () => undefined,
        }),
      };
    }
    return {
      name: 'bare',
      kind,
      keeps: 'nothing (in-memory Set)',
      prepare: () => ({
        args: [compiledScript('bench/bare-runner.js'), ...urls, '--concurrency', concurrency],
        cleanup: () => undefined,
      }),
    };
  });
}
