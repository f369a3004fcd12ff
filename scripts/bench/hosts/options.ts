import { parseArgs } from 'node:util';
import { BenchOptionsError } from '../options-error.js';
import type { RunnerKind } from '../runners.js';
import { MAX_HOSTS } from './plan.js';

export interface HostsBenchOptions {
  hostCount: number;
  /** Pages over all hosts, split in proportion to each host's polite rate (plan.ts). */
  pages: number;
  seed: number;
  minLatencyMs: number;
  maxLatencyMs: number;
  /** The crawl's politeness, which every host of the site checks. */
  hostConcurrency: number;
  hostDelayMs: number;
  /** A start-to-start gap counts as a violation only when it is this much short of the delay. */
  toleranceMs: number;
  /** Requests in flight at most over all hosts, for every runner (ackcrawl: processes × concurrency). */
  totalConcurrency: number;
  ackProcesses: number;
  pageBytes: number;
  only: RunnerKind[];
  timeoutMs: number;
  verbose: boolean;
}

const KINDS: readonly RunnerKind[] = ['ackcrawl', 'crawlee', 'bare'];

/** What `npm run bench -- --hosts --help` prints. */
export const HOSTS_BENCH_USAGE = `usage: npm run bench -- --hosts [options]

Many slow hosts on loopback, each answering after a latency of its own and checking the crawl's
politeness; every runner crawls them at the same total concurrency. Prints the ceiling that
politeness and latency allow, each runner's ratio to it, and the violations the hosts counted.

  --host-count N          hosts (128)
  --pages N               pages over all hosts (16000)
  --seed N                the site's seed (1)
  --min-latency MS        the fastest host's answer time (50)
  --max-latency MS        the slowest host's answer time (200)
  --host-concurrency N    requests in flight per host (1)
  --host-delay MS         between two requests' starts on a host (150)
  --tolerance-ms MS       a gap this much short of the delay is a violation (5)
  --total-concurrency N   requests in flight over all hosts, for every runner (256)
  --ack-processes N       ackcrawl's crawler processes (2)
  --page-bytes N          bytes per page (10240)
  --only LIST             runners, of ackcrawl,crawlee,bare (all)
  --timeout-s N           a runner that takes longer fails (900)
  --verbose               the runners' own output too`;

/**
 * The defaults make both limits of politeness bind: with one request in flight per host and
 * 150 ms between starts, hosts answering in under 150 ms are held by the delay (6.7 pages/s),
 * slower ones by their latency (5–6.7 pages/s). The ceiling, about 800 pages/s over 128 hosts,
 * stays well below what ackcrawl parses on two cores (~1 ms of CPU per page), so the bench
 * measures scheduling, not CPU. 256 requests in flight leave room above the ~100 a polite crawl
 * needs here (Σ r·L), so the total concurrency does not bind either.
 */
export function parseHostsBenchOptions(argv: string[]): HostsBenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      hosts: { type: 'boolean', default: true },
      'host-count': { type: 'string', default: '128' },
      pages: { type: 'string', default: '16000' },
      seed: { type: 'string', default: '1' },
      'min-latency': { type: 'string', default: '50' },
      'max-latency': { type: 'string', default: '200' },
      'host-concurrency': { type: 'string', default: '1' },
      'host-delay': { type: 'string', default: '150' },
      'tolerance-ms': { type: 'string', default: '5' },
      'total-concurrency': { type: 'string', default: '256' },
      'ack-processes': { type: 'string', default: '2' },
      'page-bytes': { type: 'string', default: '10240' },
      only: { type: 'string', default: KINDS.join(',') },
      'timeout-s': { type: 'string', default: '900' },
      verbose: { type: 'boolean', default: false },
    },
  });
  const problems: string[] = [];
  const int = (name: string, text: string, min = 1): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min)
      problems.push(`--${name} must be an integer ≥ ${min}, got "${text}"`);
    return n;
  };
  const only = values.only.split(',').map((s) => s.trim()) as RunnerKind[];
  for (const kind of only) {
    if (!KINDS.includes(kind)) problems.push(`--only: unknown runner "${kind}" (known: ${KINDS.join(', ')})`);
  }
  const options: HostsBenchOptions = {
    hostCount: int('host-count', values['host-count']),
    pages: int('pages', values.pages),
    seed: int('seed', values.seed),
    minLatencyMs: int('min-latency', values['min-latency']),
    maxLatencyMs: int('max-latency', values['max-latency']),
    hostConcurrency: int('host-concurrency', values['host-concurrency']),
    hostDelayMs: int('host-delay', values['host-delay'], 0),
    toleranceMs: int('tolerance-ms', values['tolerance-ms'], 0),
    totalConcurrency: int('total-concurrency', values['total-concurrency']),
    ackProcesses: int('ack-processes', values['ack-processes']),
    pageBytes: int('page-bytes', values['page-bytes'], 1024),
    only,
    timeoutMs: int('timeout-s', values['timeout-s']) * 1000,
    verbose: values.verbose,
  };
  if (options.hostCount > MAX_HOSTS) problems.push(`--host-count must be at most ${MAX_HOSTS}`);
  if (options.maxLatencyMs < options.minLatencyMs) problems.push('--max-latency must be ≥ --min-latency');
  if (options.pages < options.hostCount) problems.push('--pages must be at least --host-count');
  if (problems.length > 0) throw new BenchOptionsError(problems);
  return options;
}
