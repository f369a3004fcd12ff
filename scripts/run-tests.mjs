#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner, except the
// broker-cluster fault tests (dist/test/broker-cluster/), which need the clusters of
// `scripts/services.sh cluster-up` and run apart: `node scripts/run-tests.mjs --cluster`
// (npm run test:cluster).
// Usage: node scripts/run-tests.mjs [--cluster] [filter...]  — a filter keeps files whose path contains it.
// First it starts the services the tests talk to (RabbitMQ, Kafka, MinIO, PostgreSQL on loopback,
// installing them the first time) with `scripts/services.sh up`; ACKCRAWL_SERVICES=skip leaves
// services alone (they are already running, or the chosen tests need none). It also fetches the
// extract bench's labelled pages, which the extraction tests read, into .cache/ (once: from
// trafilatura's sdist on PyPI; scripts/bench/extract/fetch-pages.sh); if that fails, the tests run
// anyway and those that need the pages fail saying what to run.
// With --cluster: MinIO only of the single-node services (`up minio`, unless ACKCRAWL_SERVICES=skip),
// then `scripts/services.sh cluster-up` (3 RabbitMQ nodes, 3 Kafka brokers; unless
// ACKCRAWL_CLUSTER_SERVICES=skip), then the broker-cluster tests alone.
// The output is node's TAP; after it come the failed tests again, each with its file and reason
// (scripts/test-failures-reporter.mjs), and a last line `N passed, N failed, N skipped`.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { spawnSync } from 'node:child_process';

const CLUSTER_DIR = join('dist', 'test', 'broker-cluster') + sep;

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.test.js') ? [path] : [];
  });
}

function services(args, what) {
  const up = spawnSync('bash', ['scripts/services.sh', ...args], { stdio: 'inherit' });
  if (up.status !== 0) {
    console.error(`scripts/services.sh ${args.join(' ')} failed; the tests need ${what}`);
    process.exit(up.status ?? 1);
  }
}

const args = process.argv.slice(2);
const cluster = args.includes('--cluster');
const filters = args.filter((a) => a !== '--cluster');
const files = walk('dist/test')
  .filter((f) => f.startsWith(CLUSTER_DIR) === cluster)
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
if (cluster) {
  if (process.env.ACKCRAWL_SERVICES !== 'skip') {
    services(['up', 'minio'], 'MinIO (ACKCRAWL_SERVICES=skip to run without)');
  }
  if (process.env.ACKCRAWL_CLUSTER_SERVICES !== 'skip') {
    services(['cluster-up'], 'the broker clusters (ACKCRAWL_CLUSTER_SERVICES=skip when they are up)');
  }
} else {
  if (process.env.ACKCRAWL_SERVICES !== 'skip') {
    services(['up'], 'its services (ACKCRAWL_SERVICES=skip to run without)');
  }
  const pages = spawnSync('bash', ['scripts/bench/extract/fetch-pages.sh'], { stdio: 'inherit' });
  if (pages.status !== 0) {
    console.error(
      'scripts/bench/extract/fetch-pages.sh failed; the tests that read the labelled pages will fail',
    );
  }
}
const scratch = mkdtempSync(join(tmpdir(), 'ackcrawl-test-run-'));
const failuresFile = join(scratch, 'failures.jsonl');
const result = spawnSync(
  process.execPath,
  [
    '--test',
    '--test-concurrency=1',
    '--test-reporter=tap',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-failures-reporter.mjs',
    `--test-reporter-destination=${failuresFile}`,
    ...files,
  ],
  { stdio: 'inherit' },
);
summarise(failuresFile);
rmSync(scratch, { recursive: true, force: true });
process.exit(result.status ?? 1);

/** Prints the failed tests again, a reason cut to its first and last lines, then the totals. */
function summarise(file) {
  let lines;
  try {
    lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch (error) {
    console.log(`(no failure summary: ${error.message})`);
    return;
  }
  const failed = lines.filter((l) => l.kind === 'fail');
  const totals = lines.find((l) => l.kind === 'totals') ?? {};
  if (failed.length > 0) {
    console.log(`\nfailed tests (${failed.length}):`);
    for (const f of failed) {
      console.log(`- ${f.name}\n  at ${f.file ?? '?'}:${f.line ?? '?'}`);
      console.log(cut(String(f.reason), 2_000, 4_000).replace(/^/gm, '    '));
    }
  }
  console.log(
    `${totals.pass ?? 0} passed, ${totals.fail ?? failed.length} failed, ${totals.skipped ?? 0} skipped`,
  );
}

function cut(text, head, tail) {
  if (text.length <= head + tail) return text;
  return `${text.slice(0, head)}\n[… ${text.length - head - tail} characters …]\n${text.slice(-tail)}`;
}
