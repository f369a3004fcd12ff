/**
 * URLs the frontier has already durably accepted, most recent first out when full: a bounded,
 * exact cache in front of the frontier's own dedup. Most links on a page point at pages already
 * known; this spares the frontier those lookups. Only URLs whose settle committed are added, so a
 * hit always means "the frontier has it" and never drops a new URL. Memory is fixed by `capacity`.
 */
export class SeenCache {
  private readonly urls = new Set<string>();

  constructor(private readonly capacity = 200_000) {}

  has(url: string): boolean {
    return this.urls.has(url);
  }

  add(url: string): void {
    if (this.urls.has(url)) return;
    if (this.urls.size >= this.capacity) {
      const oldest = this.urls.values().next();
      if (!oldest.done) this.urls.delete(oldest.value);
    }
    this.urls.add(url);
  }

  get size(): number {
    return this.urls.size;
  }
}
