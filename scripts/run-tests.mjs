#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner.
// Usage: node scripts/run-tests.mjs [filter...]  — a filter keeps files whose path contains it.
// First it starts the services the tests talk to (RabbitMQ, Kafka, MinIO, PostgreSQL on loopback,
// installing them the first time) with `scripts/services.sh up`; ACKCRAWL_SERVICES=skip leaves
// services alone (they are already running, or the chosen tests need none). It also fetches the
// extract bench's labelled pages, which the extraction tests read, into .cache/ (once: from
// trafilatura's sdist on PyPI; scripts/bench/extract/fetch-pages.sh); if that fails, the tests run
// anyway and those that need the pages fail saying what to run.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.test.js') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = walk('dist/test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
if (process.env.ACKCRAWL_SERVICES !== 'skip') {
  const up = spawnSync('bash', ['scripts/services.sh', 'up'], { stdio: 'inherit' });
  if (up.status !== 0) {
    console.error(
      'scripts/services.sh up failed; the tests need its services (ACKCRAWL_SERVICES=skip to run without)',
    );
    process.exit(up.status ?? 1);
  }
}
const pages = spawnSync('bash', ['scripts/bench/extract/fetch-pages.sh'], { stdio: 'inherit' });
if (pages.status !== 0) {
  console.error(
    'scripts/bench/extract/fetch-pages.sh failed; the tests that read the labelled pages will fail',
  );
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
