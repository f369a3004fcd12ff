import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelFromArgv } from '../../scripts/bench/process-label.js';
import { runMeasured } from '../../scripts/bench/run-measured.js';

test('a process is named by its script, with the CLI subcommand when there is one', () => {
  assert.equal(
    labelFromArgv(['/usr/bin/node', '/x/dist/master/cli/main.js', 'scheduler']),
    'cli/main.js scheduler',
  );
  assert.equal(
    labelFromArgv(['node', '--max-semi-space-size=8', '/x/dist/bundles/crawler.js']),
    'bundles/crawler.js',
  );
  assert.equal(labelFromArgv(['node', '/x/cli/main.js', 'https://a.test/']), 'cli/main.js');
  assert.equal(labelFromArgv(['/usr/bin/sleep', '1']), 'sleep');
});

test('the measured tree is split by process: each child has its own CPU and peak RSS', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-tree-'));
  try {
    const busy = join(dir, 'busy.js');
    // Holds 60 MB and spins for 0.6 s of CPU, so both show above the sampler's resolution.
    writeFileSync(
      busy,
      'const held = Buffer.alloc(60 * 1024 * 1024, 1);\n' +
        'const end = process.cpuUsage().user + 600_000;\n' +
        'while (process.cpuUsage().user < end);\n' +
        'setTimeout(() => process.stdout.write(String(held.length) + "\\n"), 300);\n',
    );
    const parent = join(dir, 'parent.js');
    writeFileSync(
      parent,
      `const { spawnSync } = require('node:child_process');\n` +
        `spawnSync(process.execPath, [${JSON.stringify(busy)}], { stdio: 'ignore' });\n`,
    );
    const run = await runMeasured({ command: process.execPath, args: [parent], timeoutMs: 30_000 });
    assert.equal(run.exitCode, 0);
    const child = run.processes.find((p) => p.label.endsWith('/busy.js'));
    const root = run.processes.find((p) => p.label.endsWith('/parent.js'));
    assert.ok(child && root, `both processes listed: ${run.processes.map((p) => p.label).join(', ')}`);
    assert.ok(child.cpuSeconds >= 0.4, `busy child used ${child.cpuSeconds} CPU-s`);
    assert.ok(root.cpuSeconds < child.cpuSeconds, 'the waiting parent used less');
    assert.ok(child.peakRssBytes >= 60 * 1024 * 1024, `busy child peaked at ${child.peakRssBytes} bytes`);
    assert.ok(child.rssAtTreePeakBytes > 0 && child.rssAtTreePeakBytes <= child.peakRssBytes);
    const atPeak = run.processes.reduce((sum, p) => sum + p.rssAtTreePeakBytes, 0);
    assert.equal(atPeak, run.peakRssBytes, "the tree's peak is the sum of its processes at that sample");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the tree's PSS counts node's shared code once, where the RSS sum counts it per process", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-pss-'));
  try {
    const holder = join(dir, 'holder.js');
    // 60 MB of its own (written, so private), held long enough for several samples.
    writeFileSync(
      holder,
      'const held = Buffer.alloc(60 * 1024 * 1024, 1);\n' +
        'setTimeout(() => process.stdout.write(String(held.length) + "\\n"), 1_500);\n',
    );
    const parent = join(dir, 'parent.js');
    writeFileSync(
      parent,
      `const { spawnSync } = require('node:child_process');\n` +
        `spawnSync(process.execPath, [${JSON.stringify(holder)}], { stdio: 'ignore' });\n`,
    );
    const run = await runMeasured({ command: process.execPath, args: [parent], timeoutMs: 30_000 });
    assert.equal(run.exitCode, 0);
    assert.notEqual(run.peakPssBytes, null, 'this Linux has smaps_rollup');
    const pss = run.peakPssBytes ?? 0;
    const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    assert.ok(pss >= 60 * 1024 * 1024, `the held 60 MB is in the PSS (${mib(pss)})`);
    // Two Node processes map one node binary: its resident code, some tens of MB, is counted
    // twice in the RSS sum and once in the PSS.
    assert.ok(
      pss <= run.peakRssBytes - 10 * 1024 * 1024,
      `PSS ${mib(pss)} is well under the RSS sum ${mib(run.peakRssBytes)}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
