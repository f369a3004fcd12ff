/** What a run's recent outcomes taught about one of its hosts. */
export interface RecentHost {
  /** Outcomes since the host entered the list. */
  fetched: number;
  lastActiveAt: number;
}

/**
 * The hosts a run had outcomes from lately, least recently active dropped first: a bounded list,
 * so a run over a million hosts costs no more than one over a few (for `GET /hosts`).
 */
export class RecentHosts {
  private readonly hosts = new Map<string, RecentHost>();

  constructor(private readonly capacity = 64) {}

  record(host: string, now: number): void {
    const entry = this.hosts.get(host);
    if (entry) this.hosts.delete(host);
    this.hosts.set(host, { fetched: (entry?.fetched ?? 0) + 1, lastActiveAt: now });
    if (this.hosts.size > this.capacity) {
      const oldest = this.hosts.keys().next().value;
      if (oldest !== undefined) this.hosts.delete(oldest);
    }
  }

  get(host: string): RecentHost | undefined {
    return this.hosts.get(host);
  }

  /** Most recently active first. */
  entries(): [string, RecentHost][] {
    return [...this.hosts].reverse();
  }
}
