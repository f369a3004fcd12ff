/**
 * URLs the frontier has already durably accepted, per run (the same URL in two runs is two tasks),
 * oldest first out when full: a bounded, exact cache in front of the frontier's own dedup. Most
 * links on a page point at pages already known; this spares the frontier those lookups. Only URLs
 * whose settle committed are added, so a hit always means "the frontier has it" and never drops a
 * new URL. Memory is fixed by `capacity`, across every run.
 *
 * One set per run, so a lookup hashes the URL string itself (whose hash V8 keeps) instead of a
 * fresh run-and-URL key on every call. The order of insertion across runs is a ring of
 * (run, URL) pairs, so eviction is oldest first over all runs together and costs O(1). (It must
 * not ask a Set for its first entry: V8 keeps a deleted entry's slot until the table is rebuilt,
 * and a full cache that evicts one and adds one never rebuilds it, so each first-entry lookup
 * walked every slot deleted before it — at a million pages, 80 % of the scheduler's CPU.)
 */
export class SeenCache {
  private readonly runs = new Map<string, Set<string>>();
  private readonly ringRuns: string[] = [];
  private readonly ringUrls: string[] = [];
  /** Index in the ring of the oldest entry; `count` entries follow it. */
  private head = 0;
  private count = 0;

  /**
   * 50,000 URLs, a few MB. Lowered from 200,000 together with the SQLite frontier's page cache
   * (see SqliteFrontierOptions.cacheSizeMb): at 200,000 pages the scheduler peaked at 124 MB
   * instead of 171, and the crawl was no slower.
   */
  constructor(private readonly capacity = 50_000) {}

  has(runId: string, url: string): boolean {
    return this.runs.get(runId)?.has(url) === true;
  }

  add(runId: string, url: string): void {
    let urls = this.runs.get(runId);
    if (urls === undefined) this.runs.set(runId, (urls = new Set()));
    else if (urls.has(url)) return;
    if (this.count >= this.capacity) this.evictOldest();
    urls.add(url);
    const at = (this.head + this.count) % this.capacity;
    this.ringRuns[at] = runId;
    this.ringUrls[at] = url;
    this.count += 1;
  }

  get size(): number {
    return this.count;
  }

  private evictOldest(): void {
    const runId = this.ringRuns[this.head] as string;
    const url = this.ringUrls[this.head] as string;
    this.head = (this.head + 1) % this.capacity;
    this.count -= 1;
    const urls = this.runs.get(runId);
    if (urls === undefined) return;
    urls.delete(url);
    if (urls.size === 0) this.runs.delete(runId);
  }
}
