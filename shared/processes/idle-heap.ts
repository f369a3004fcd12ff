import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives back the young generation that a process grew at start-up and no longer needs.
 *
 * A crawl's CLI and an agent do their work at start-up (loading modules, spawning processes) and
 * then mostly wait. Loading grows V8's young generation (the crawl CLI's to 16 MiB), and V8 shrinks it
 * only in a full collection that finds the allocation rate low, which a waiting process never
 * runs: the crawl CLI sat at 67 MB for the whole crawl with 2 MB of its 16 MiB young generation
 * in use. Its V8 flags cannot be set from outside (it is the process the user started), and the
 * young generation's size cannot be set once a process runs; a full collection while the process
 * is quiet is what shrinks it (docs/capacity.md has the figures).
 *
 * So every `intervalMs`, when the young generation is larger than `thresholdBytes`, this runs a
 * full collection. V8 shrinks only when its record of the last five seconds shows little
 * allocation (start-up counts in that record until a later collection replaces it), so a try in
 * a busy moment shrinks nothing; the next then waits twice as long (at most `maxIntervalMs`), so
 * a process that stays busy pays one small collection a minute. The timer does not keep the
 * process alive. Returns a function that stops it.
 */
export interface IdleHeapTrimOptions {
  intervalMs?: number;
  maxIntervalMs?: number;
  thresholdBytes?: number;
}

export function trimYoungGenerationWhenIdle(options: IdleHeapTrimOptions = {}): () => void {
  const intervalMs = options.intervalMs ?? 2_000;
  const maxIntervalMs = options.maxIntervalMs ?? 60_000;
  const thresholdBytes = options.thresholdBytes ?? 2 * 1024 * 1024;
  let delay = intervalMs;
  let timer: NodeJS.Timeout | undefined;
  let collect: (() => void) | undefined;

  const check = (): void => {
    if (youngGenerationBytes() > thresholdBytes) {
      collect ??= fullCollection();
      collect();
      delay = youngGenerationBytes() > thresholdBytes ? Math.min(delay * 2, maxIntervalMs) : intervalMs;
    }
    schedule();
  };
  const schedule = (): void => {
    timer = setTimeout(check, delay);
    timer.unref();
  };
  schedule();
  return () => clearTimeout(timer);
}

/** The young generation's committed size (V8's `new_space`). */
export function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * V8's `gc()`, which Node exposes only under `--expose-gc`: set at run time, the flag gives the
 * `gc` global to contexts made after it, so a new context hands it over. A forced collection of
 * this process's heap, not of that context's.
 */
function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
