/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): self time per function and per module
 * (a package under node_modules, a file of this repo, or V8's own entries such as (garbage
 * collector)), largest first.
 *
 *   node dist/scripts/bench/cpuprofile-summary.js FILE.cpuprofile [--top 25]
 *
 * `npm run bench -- --only ackcrawl --cluster --cluster-profile-dir DIR` writes the scheduler's.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: cpuprofile-summary.js FILE.cpuprofile [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idleUs = sumWhere((n) => n.callFrame.functionName === '(idle)');

const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (us === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${shortPath(url)}:${lineNumber + 1}` : '';
  add(byFunction, `${functionName || '(anonymous)'} ${where}`.trim(), us);
  add(byModule, url ? moduleOf(url) : functionName, us);
}

const top = Number(values.top);
const busyUs = totalUs - idleUs;
process.stdout.write(
  `${file}\n${ms(totalUs)} ms sampled, ${ms(busyUs)} ms busy (${pct(busyUs, totalUs)} of the wall time)\n`,
);
print('self time by module (share of busy time)', byModule, top);
print('self time by function', byFunction, top);

function print(title: string, table: Map<string, number>, limit: number): void {
  process.stdout.write(`\n${title}\n`);
  const rows = [...table].filter(([name]) => name !== '(idle)').sort((a, b) => b[1] - a[1]);
  for (const [name, us] of rows.slice(0, limit)) {
    process.stdout.write(`${ms(us).padStart(9)} ms ${pct(us, busyUs).padStart(6)}  ${name}\n`);
  }
}

function sumWhere(keep: (n: ProfileNode) => boolean): number {
  return profile.nodes.filter(keep).reduce((sum, n) => sum + (selfUs.get(n.id) ?? 0), 0);
}

function add(table: Map<string, number>, key: string, us: number): void {
  table.set(key, (table.get(key) ?? 0) + us);
}

/** `node_modules/<pkg>` (scoped too), `node:<builtin>`, or the path inside this repo. */
function moduleOf(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return url;
  return shortPath(url);
}

function shortPath(url: string): string {
  return url.replace(/^file:\/\//, '').replace(/^.*\/(dist|node_modules)\//, '$1/');
}

function ms(us: number): string {
  return (us / 1000).toFixed(0);
}

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-';
}
