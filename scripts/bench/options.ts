import { parseArgs } from 'node:util';
import { BenchOptionsError } from './options-error.js';
import {
  KAFKA_COMPRESSIONS,
  type KafkaCompression,
} from '../../shared/adapters/page-sink/kafka-compression.js';
import type { RunnerKind } from './runners.js';

export interface BenchOptions {
  pages: number;
  seed: number;
  only: RunnerKind[];
  cluster: boolean;
  /** Crawler processes of the cluster's one agent; several values run the cluster once each. */
  clusterProcesses: number[];
  /** Write a V8 CPU profile of the cluster's scheduler into this folder. */
  clusterProfileDir: string | undefined;
  /** Skip warming Kafka up before the cluster runs (its JVM then compiles during the first). */
  coldBrokers: boolean;
  /** ACKCRAWL_KAFKA_COMPRESSION of the cluster's scheduler. */
  kafkaCompression: KafkaCompression;
  /**
   * A site whose links lead through same-host 301s, crawled by ackcrawl obeying robots.txt (each
   * hop asked of the scheduler) and with --no-robots (none asked): what asking costs.
   */
  redirects: boolean;
  ackProcesses: number;
  ackConcurrency: number;
  /** One value, or several to sweep: the fastest is the reference for the ratios. */
  crawleeConcurrency: number[];
  bareConcurrency: number;
  timeoutMs: number;
  verbose: boolean;
}

const KINDS: readonly RunnerKind[] = ['ackcrawl', 'crawlee', 'bare'];

/**
 * Crawlee's maxConcurrency, measured on the 2-core development machine (20,000 pages, one run
 * each): 10 → 194 pages/s, 20 → 209, 50 → 202, 100 → 201, 200 → 253. Crawlee is CPU-bound here
 * (4–5 ms of CPU per page), so the setting matters little and runs vary by ±20 % with other load;
 * 200 was fastest. Re-check elsewhere with `--only crawlee --crawlee-concurrency 20,50,100,200`.
 */
const DEFAULT_CRAWLEE_CONCURRENCY = '200';

/**
 * Crawler processes of the cluster's agent, measured on the 2-core development machine (20,000
 * pages, concurrency 32, four quiet runs each, pages/s): 2 → 1444, 1393, 1739, 1585; 3 → 1502,
 * 1599, 1565 (4 → 1246, once). Equal within noise: every core is busy already (ackcrawl ~1.5 cores,
 * RabbitMQ ~0.3), so a third process adds only CPU and ~100 MB of RSS. Re-check elsewhere with
 * `--only ackcrawl --cluster --cluster-processes 2,3,4`.
 */
const DEFAULT_CLUSTER_PROCESSES = '2';

/** What `npm run bench -- --help` prints. */
export const BENCH_USAGE = `usage: npm run bench -- [options]        (after a build: node dist/scripts/bench/main.js)

One site of --pages pages on 127.0.0.1, crawled by each runner in turn: ackcrawl (the embedded
durable crawl), crawlee and bare (fetch + parse5, nothing durable); ratios and targets at the end.

  --pages N                  pages of the site (20000)
  --seed N                   the site's seed (1)
  --only LIST                runners, of ackcrawl,crawlee,bare (all)
  --cluster                  also the distributed crawl (RabbitMQ, Kafka, MinIO: scripts/services.sh up)
  --cluster-processes LIST   crawler processes of the cluster's agent, one run each (2)
  --cluster-profile-dir DIR  write a V8 CPU profile of the cluster's scheduler there
  --cold-brokers             do not warm Kafka up first (60,000 records of 12 KB, unmeasured)
  --kafka-compression C      the cluster's record batches: none or gzip (none)
  --redirects                every page but the home page behind a same-host 301 (/r/n → /p/n); runs
                             ackcrawl twice: obeying robots.txt (every hop asked of the scheduler) and
                             with --no-robots (none asked), and prints what asking costs
  --ack-processes N          crawler processes of the embedded crawl (2)
  --ack-concurrency N        requests in flight per crawler process (32)
  --crawlee-concurrency LIST Crawlee's maxConcurrency, the fastest is the reference (200)
  --bare-concurrency N       requests in flight of the bare loop (64)
  --timeout-s N              a runner that takes longer fails (900)
  --verbose                  the runners' own output too

Other benches: --hosts (many slow hosts, politeness ceiling), --extract (the cleaner on labelled pages),
--http-client (CPU per request of node:http, got and the crawler's Fetcher).
A million pages: npm run bench -- --pages 1000000 --only ackcrawl --timeout-s 2400`;

export function parseBenchOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      pages: { type: 'string', default: '20000' },
      seed: { type: 'string', default: '1' },
      only: { type: 'string', default: KINDS.join(',') },
      cluster: { type: 'boolean', default: false },
      'cluster-processes': { type: 'string', default: DEFAULT_CLUSTER_PROCESSES },
      'cluster-profile-dir': { type: 'string' },
      'cold-brokers': { type: 'boolean', default: false },
      'kafka-compression': { type: 'string', default: 'none' },
      redirects: { type: 'boolean', default: false },
      'ack-processes': { type: 'string', default: '2' },
      'ack-concurrency': { type: 'string', default: '32' },
      'crawlee-concurrency': { type: 'string', default: DEFAULT_CRAWLEE_CONCURRENCY },
      'bare-concurrency': { type: 'string', default: '64' },
      'timeout-s': { type: 'string', default: '900' },
      verbose: { type: 'boolean', default: false },
    },
  });
  const problems: string[] = [];
  const int = (name: keyof typeof values, text: string): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) problems.push(`--${name} must be a positive integer, got "${text}"`);
    return n;
  };
  // A redirect site is for ackcrawl alone: the bare loop does not follow redirects.
  const onlyText = values.redirects && !argv.some((a) => a.startsWith('--only')) ? 'ackcrawl' : values.only;
  const only = onlyText.split(',').map((s) => s.trim()) as RunnerKind[];
  if (values.redirects && (values.cluster || only.some((kind) => kind !== 'ackcrawl')))
    problems.push('--redirects runs the embedded ackcrawl only (no --cluster, --only ackcrawl)');
  for (const kind of only) {
    if (!KINDS.includes(kind)) problems.push(`--only: unknown runner "${kind}" (known: ${KINDS.join(', ')})`);
  }
  const compression = values['kafka-compression'] as KafkaCompression;
  if (!KAFKA_COMPRESSIONS.includes(compression))
    problems.push(
      `--kafka-compression must be one of ${KAFKA_COMPRESSIONS.join(', ')}, got "${compression}"`,
    );
  const options: BenchOptions = {
    pages: int('pages', values.pages),
    seed: int('seed', values.seed),
    only,
    cluster: values.cluster,
    clusterProcesses: values['cluster-processes'].split(',').map((n) => int('cluster-processes', n)),
    clusterProfileDir: values['cluster-profile-dir'],
    coldBrokers: values['cold-brokers'],
    kafkaCompression: compression,
    redirects: values.redirects,
    ackProcesses: int('ack-processes', values['ack-processes']),
    ackConcurrency: int('ack-concurrency', values['ack-concurrency']),
    crawleeConcurrency: values['crawlee-concurrency'].split(',').map((c) => int('crawlee-concurrency', c)),
    bareConcurrency: int('bare-concurrency', values['bare-concurrency']),
    timeoutMs: int('timeout-s', values['timeout-s']) * 1000,
    verbose: values.verbose,
  };
  if (problems.length > 0) throw new BenchOptionsError(problems);
  return options;
}
