/**
 * URLs the frontier has already durably accepted, per run (the same URL in two runs is two tasks), most recent first out when full: a bounded,
 * exact cache in front of the frontier's own dedup. Most links on a page point at pages already
 * known; this spares the frontier those lookups. Only URLs whose settle committed are added, so a
 * hit always means "the frontier has it" and never drops a new URL. Memory is fixed by `capacity`.
 */
export class SeenCache {
  private readonly urls = new Set<string>();

  constructor(private readonly capacity = 200_000) {}

  has(runId: string, url: string): boolean {
    return this.urls.has(keyOf(runId, url));
  }

  add(runId: string, url: string): void {
    const key = keyOf(runId, url);
    if (this.urls.has(key)) return;
    if (this.urls.size >= this.capacity) {
      const oldest = this.urls.values().next();
      if (!oldest.done) this.urls.delete(oldest.value);
    }
    this.urls.add(key);
  }

  get size(): number {
    return this.urls.size;
  }
}

/** A space never occurs in a normalised URL nor in a run id. */
function keyOf(runId: string, url: string): string {
  return `${runId} ${url}`;
}
