#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner.
// Usage: node scripts/run-tests.mjs [filter...]  — a filter keeps files whose path contains it.
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
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
