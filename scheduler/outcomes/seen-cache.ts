/**
 * URLs the frontier has already durably accepted, per run (the same URL in two runs is two tasks),
 * oldest first out when full: a bounded, exact cache in front of the frontier's own dedup. Most
 * links on a page point at pages already known; this spares the frontier those lookups. Only URLs
 * whose settle committed are added, so a hit always means "the frontier has it" and never drops a
 * new URL. Memory is fixed by `capacity`, across every run.
 *
 * One set per run, so a lookup hashes the URL string itself (whose hash V8 keeps) instead of a
 * fresh run-and-URL key on every call. The order of insertion across runs is kept run-length
 * encoded (run id, how many in a row), so eviction is oldest first over all runs together.
 */
export class SeenCache {
  private readonly runs = new Map<string, Set<string>>();
  private count = 0;
  /** Insertion order across runs, from `head`: runOrder[i] added counts[i] URLs in a row. */
  private runOrder: string[] = [];
  private counts: number[] = [];
  private head = 0;

  constructor(private readonly capacity = 200_000) {}

  has(runId: string, url: string): boolean {
    return this.runs.get(runId)?.has(url) === true;
  }

  add(runId: string, url: string): void {
    let urls = this.runs.get(runId);
    if (urls === undefined) this.runs.set(runId, (urls = new Set()));
    else if (urls.has(url)) return;
    if (this.count >= this.capacity) this.evictOldest();
    urls.add(url);
    this.count += 1;
    const last = this.runOrder.length - 1;
    if (last >= this.head && this.runOrder[last] === runId) this.counts[last] = (this.counts[last] ?? 0) + 1;
    else {
      this.runOrder.push(runId);
      this.counts.push(1);
    }
  }

  get size(): number {
    return this.count;
  }

  private evictOldest(): void {
    const runId = this.runOrder[this.head];
    if (runId === undefined) return;
    const urls = this.runs.get(runId);
    const oldest = urls?.values().next();
    if (urls !== undefined && oldest !== undefined && oldest.done !== true) {
      urls.delete(oldest.value);
      this.count -= 1;
      if (urls.size === 0) this.runs.delete(runId);
    }
    const left = (this.counts[this.head] ?? 1) - 1;
    this.counts[this.head] = left;
    if (left > 0) return;
    this.head += 1;
    // Drop the consumed front once it is most of the arrays.
    if (this.head > 1_024 && this.head * 2 > this.runOrder.length) {
      this.runOrder = this.runOrder.slice(this.head);
      this.counts = this.counts.slice(this.head);
      this.head = 0;
    }
  }
}
