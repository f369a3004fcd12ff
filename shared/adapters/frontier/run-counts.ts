/** Tasks of one run per state, as the SQLite frontier keeps them in memory. */
export interface Counts {
  queued: number;
  leased: number;
  done: number;
  failed: number;
  cancelled: number;
}

export type CountKey = keyof Counts;

export function zeroCounts(): Counts {
  return { queued: 0, leased: 0, done: 0, failed: 0, cancelled: 0 };
}

export function totalOf(c: Counts): number {
  return c.queued + c.leased + c.done + c.failed + c.cancelled;
}

/**
 * Per-run counters: the committed ones, and a transaction's changes (`Delta`) that are merged in
 * only after the commit, so a rolled-back transaction leaves them right.
 */
export class RunCounts {
  private readonly runs = new Map<string, Counts>();

  of(runId: string): Counts {
    return this.runs.get(runId) ?? zeroCounts();
  }

  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** Every run's counters added up, but for those of `except`. */
  sum(except?: ReadonlySet<string>): Counts {
    const all = zeroCounts();
    for (const [runId, c] of this.runs) if (except?.has(runId) !== true) addInto(all, c);
    return all;
  }

  /** A run's counters as given (a retired run's, kept when its tasks are gone). */
  replace(runId: string, counts: Counts): void {
    this.runs.set(runId, { ...counts });
  }

  runIds(): string[] {
    return [...this.runs.keys()];
  }

  set(runId: string, key: CountKey, n: number): void {
    const c = this.runs.get(runId) ?? zeroCounts();
    c[key] = n;
    this.runs.set(runId, c);
  }

  merge(delta: Delta): void {
    for (const [runId, d] of delta.entries()) {
      const c = this.runs.get(runId) ?? zeroCounts();
      addInto(c, d);
      this.runs.set(runId, c);
    }
  }
}

/** Changes to per-run counters within one transaction. */
export class Delta {
  private readonly runs = new Map<string, Counts>();

  of(runId: string): Counts {
    let c = this.runs.get(runId);
    if (c === undefined) this.runs.set(runId, (c = zeroCounts()));
    return c;
  }

  move(runId: string, from: CountKey, to: CountKey, n = 1): void {
    const c = this.of(runId);
    c[from] -= n;
    c[to] += n;
  }

  entries(): IterableIterator<[string, Counts]> {
    return this.runs.entries();
  }
}

function addInto(into: Counts, c: Counts): void {
  into.queued += c.queued;
  into.leased += c.leased;
  into.done += c.done;
  into.failed += c.failed;
  into.cancelled += c.cancelled;
}
