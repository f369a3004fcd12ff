/**
 * Child process for the SQLite frontier crash test: pushes, leases and acks in a loop until it is
 * killed. After each call resolves it prints what that call confirmed, one line per URL:
 * `P <url>` pushed (accepted now or already known), `A <url>` acked. Writes to a pipe are
 * synchronous on Linux, so a printed line was confirmed before any later kill.
 *
 * Usage: node frontier-crash-child.js <file> <url prefix>
 */
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import type { NewTask } from '../../shared/protocol/task.js';

const [path, prefix] = process.argv.slice(2);
if (path === undefined || prefix === undefined) {
  process.stderr.write('usage: frontier-crash-child <file> <url prefix>\n');
  process.exit(2);
}

const task = (url: string, depth = 0): NewTask => ({
  runId: 'default',
  url,
  host: new URL(url).host,
  depth,
  priority: depth === 0 ? 1 : 0,
  parentUrl: null,
});
const confirm = (kind: 'P' | 'A', urls: readonly string[]): void => {
  if (urls.length > 0) process.stdout.write(urls.map((u) => `${kind} ${u}\n`).join(''));
};

const frontier = openSqliteFrontier({ path, leaseMs: 60_000 });
// The embedded scheduler's start: it owns the file, so leases of a killed run are put back.
frontier.releaseAllLeases();

for (let n = 0; ; n += 1) {
  const seeds = Array.from({ length: 4 }, (_, i) => task(`https://s${i}.test/${prefix}/${n}`));
  await frontier.push(seeds);
  confirm(
    'P',
    seeds.map((t) => t.url),
  );

  const leases = await frontier.lease(8);
  // Ack most, keep a few leased so the kill leaves leases behind.
  const acked = leases.slice(0, 6);
  const acks = acked.map((lease) => ({
    lease: { taskId: lease.taskId, leaseId: lease.leaseId },
    discovered:
      lease.depth === 0
        ? [task(`${lease.url}/child`, 1), task(`https://shared.test/${prefix}/${n % 7}`, 1)]
        : [],
  }));
  const result = await frontier.settle({ acks, retries: [], failures: [], checkpoint: `${prefix}:${n}` });
  if (result.applied !== acks.length) {
    process.stderr.write(`expected ${acks.length} acks applied, got ${result.applied}\n`);
    process.exit(1);
  }
  confirm(
    'P',
    acks.flatMap((a) => a.discovered.map((t) => t.url)),
  );
  confirm(
    'A',
    acked.map((l) => l.url),
  );
}
