/**
 * SQLite frontier timings on a large file: open (counters recounted), lease of 100, settle of
 * 100 acks each with 20 discovered URLs of which 80% were seen before, stats(), and lease() when
 * the host holding most of the queue is excluded (its worst case: the scan walks past that host).
 *
 *   node dist/scripts/bench/sqlite-frontier.js [--rows 1000000] [--rounds 200] [--dir .bench]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { DEFAULT_RUN_ID, type NewTask } from '../../shared/protocol/task.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '200' },
    dir: { type: 'string', default: '.bench' },
  },
});
const rows = Number(values.rows);
const rounds = Number(values.rounds);
mkdirSync(values.dir, { recursive: true });
const dir = mkdtempSync(join(resolve(values.dir), 'sqlite-frontier-'));
const path = join(dir, 'frontier.db');

const HOSTS = 50;
let serial = 0;
const newTask = (): NewTask => {
  serial += 1;
  // One host in two is big.test, so excluding it shows lease()'s worst case.
  const host = serial % 2 === 0 ? 'big.test' : `h${serial % HOSTS}.example.test`;
  return {
    runId: DEFAULT_RUN_ID,
    url: `https://${host}/section/${serial % 997}/page-${serial}.html?ref=bench`,
    host,
    depth: 1,
    priority: 0,
    parentUrl: null,
  };
};
const seenTask = (): NewTask => {
  const n = 1 + Math.floor(Math.random() * serial);
  const host = n % 2 === 0 ? 'big.test' : `h${n % HOSTS}.example.test`;
  return {
    runId: DEFAULT_RUN_ID,
    url: `https://${host}/section/${n % 997}/page-${n}.html?ref=bench`,
    host,
    depth: 1,
    priority: 0,
    parentUrl: null,
  };
};

/** CPU time (user + system) per sample is steadier than wall time on a busy machine. */
const cpu: Record<string, number> = {};
function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function timed<T>(samples: number[], fn: () => T): T {
  const start = process.hrtime.bigint();
  const result = fn();
  samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  return result;
}
async function timedAsync<T>(samples: number[], fn: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  const result = await fn();
  samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  return result;
}
function summary(name: string, samples: number[], cpuMs?: number): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): string =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(2);
  console.log(
    `${name.padEnd(44)} n=${String(sorted.length).padStart(4)}  p50 ${at(0.5)} ms  p95 ${at(0.95)} ms  max ${at(1)} ms` +
      (cpuMs === undefined ? '' : `  cpu ${(cpuMs / sorted.length).toFixed(2)} ms/call`),
  );
}

try {
  let frontier = openSqliteFrontier({ path });
  const fillStart = Date.now();
  for (let left = rows; left > 0; left -= 10_000) {
    await frontier.push(Array.from({ length: Math.min(left, 10_000) }, newTask));
  }
  console.log(`prefill ${rows} rows: ${((Date.now() - fillStart) / 1000).toFixed(1)} s`);
  await frontier.close();

  const openMs: number[] = [];
  frontier = timed(openMs, () => openSqliteFrontier({ path }));
  summary('open (recount states)', openMs);

  const leaseMs: number[] = [];
  const settleMs: number[] = [];
  const statsMs: number[] = [];
  let accepted = 0;
  for (let i = 0; i < rounds; i += 1) {
    let start = process.cpuUsage();
    const leases = await timedAsync(leaseMs, () => frontier.lease(100));
    cpu.lease = (cpu.lease ?? 0) + cpuSince(start);
    const acks = leases.map((lease) => ({
      lease: { taskId: lease.taskId, leaseId: lease.leaseId },
      discovered: Array.from({ length: 20 }, (_, k) => (k < 16 ? seenTask() : newTask())),
    }));
    start = process.cpuUsage();
    const result = await timedAsync(settleMs, () => frontier.settle({ acks, retries: [], failures: [] }));
    cpu.settle = (cpu.settle ?? 0) + cpuSince(start);
    accepted += result.accepted;
    await timedAsync(statsMs, () => frontier.stats());
  }
  summary('lease(100)', leaseMs, cpu.lease);
  summary('settle(100 acks x 20 discovered, 80% seen)', settleMs, cpu.settle);
  summary('stats()', statsMs);
  console.log(`accepted ${accepted} discovered of ${rounds * 100 * 20} offered`);

  const excludedMs: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const leases = await timedAsync(excludedMs, () => frontier.lease(100, { excludeHosts: ['big.test'] }));
    await frontier.release(leases);
  }
  summary('lease(100) excluding the host of half the queue', excludedMs);
  const allExcludedMs: number[] = [];
  const allHosts = ['big.test', ...Array.from({ length: HOSTS }, (_, h) => `h${h}.example.test`)];
  for (let i = 0; i < 5; i += 1) {
    await timedAsync(allExcludedMs, () => frontier.lease(100, { excludeHosts: allHosts }));
  }
  summary('lease(100) with every host excluded (full scan)', allExcludedMs);
  console.log(JSON.stringify(await frontier.stats()));
  await frontier.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
