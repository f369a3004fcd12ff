import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { RoleHeap } from './node-flags.js';
import { V8_DEFAULT_GROWTH_FACTOR } from './young-generation.js';

/**
 * A role's heap settings (node-flags.ts), taken from inside a process that is already running.
 *
 * The roles ackcrawl starts itself (the embedded crawl's scheduler, an agent's crawlers) get them
 * as node flags. A role the user starts (`ackcrawl scheduler`, `ackcrawl crawler`, under systemd
 * or by hand) is a process whose flags ackcrawl cannot choose, and it ran with V8's defaults: a
 * cluster's scheduler peaked at 236-251 MB in `npm run bench -- --cluster`, against 150-153 with
 * the flags (docs/capacity.md). Two of the settings can still be given once a process runs:
 * - `--heap-growing-percent` is read at each full collection;
 * - the young generation's largest size is fixed at start, but the factor by which it grows is
 *   read each time it grows. Steered after every collection (V8's own 2, or less so that a growth
 *   lands on the cap at most, then 1), it stops at the cap. The steering runs between turns of the
 *   event loop: a turn that grows the young generation twice can take it one step past the cap.
 * glibc's tunables (roleProcessEnv) are read at start only: the process keeps the environment it
 * was given. A setting already among the process's own flags (`node --max-semi-space-size=…`,
 * `NODE_OPTIONS`) is left as it is. Returns a function that stops steering.
 */
export function applyRoleHeap(heap: RoleHeap, given: readonly string[] = ownNodeFlags()): () => void {
  const has = (flag: string): boolean => hasNodeFlag(given, flag);
  if (!has('--heap-growing-percent')) setFlagsFromString(`--heap-growing-percent=${heap.heapGrowingPercent}`);
  if (has('--max-semi-space-size')) return () => undefined;
  return capYoungGeneration(heap.semiSpaceMiB);
}

/** The young generation's two semi-spaces stay at `semiSpaceMiB` each at most, as if started with `--max-semi-space-size`. */
export function capYoungGeneration(semiSpaceMiB: number): () => void {
  const capBytes = 2 * semiSpaceMiB * 1024 * 1024;
  let factor = 0;
  const steer = (): void => {
    const size = youngGenerationBytes();
    if (size <= 0) return;
    const wanted = Math.max(1, Math.min(V8_DEFAULT_GROWTH_FACTOR, Math.floor(capBytes / size)));
    if (wanted === factor) return;
    factor = wanted;
    setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
  };
  steer();
  const observer = new PerformanceObserver(steer);
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Whether `flag` (`--max-semi-space-size`) is among `given`, alone or with `=value`, in either of
 * the spellings V8 takes: `-` and `_` are the same in a flag's name.
 */
export function hasNodeFlag(given: readonly string[], flag: string): boolean {
  const name = flag.replaceAll('_', '-');
  return given.some((arg) => {
    const eq = arg.indexOf('=');
    return (eq === -1 ? arg : arg.slice(0, eq)).replaceAll('_', '-') === name;
  });
}

/** The node flags this process was started with: its own, then NODE_OPTIONS's. */
function ownNodeFlags(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)];
}
