import { it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import type { FakeClock } from '../helpers/fake-clock.js';

/** What an adapter's test file hands the contract suite, once per test. */
export interface FrontierFixture {
  frontier: Frontier;
  /** Open the same store again as a new process would after a crash (no close before). */
  reopen?: () => Promise<Frontier>;
  cleanup: () => Promise<void>;
  /**
   * For adapters whose retry delays run on real time (a broker's TTLs) while leases run on the
   * fake clock: called after each advance of the clock with the same amount, it waits (in real
   * time, with the fixture's short delay bucket) until retries due by the new clock time are back.
   */
  elapse?: (ms: number) => Promise<void>;
  /** A crashed process's leases come back at once (a broker sees its connection drop), not at expiry. */
  crashReleasesLeases?: boolean;
  /** For a broker: a run's queues as the broker sees them (ready messages, consumers). */
  queueState?: (runId: string) => Promise<{ ready: number; consumers: number }>;
}

export type MakeFrontier = (ctx: { clock: FakeClock }) => Promise<FrontierFixture>;

export interface CaseContext extends FrontierFixture {
  clock: FakeClock;
  t: TestContext;
  /** Moves the fake clock on by `ms`, then lets real-time retry delays catch up (see `elapse`). */
  advance: (ms: number) => Promise<void>;
}

/** Declares one contract case: a fresh frontier and clock per case, cleaned up whatever happens. */
export type DefineCase = (title: string, body: (ctx: CaseContext) => Promise<void>) => void;

export function caseDefiner(make: MakeFrontier, clockFactory: () => FakeClock): DefineCase {
  return (title, body) => {
    it(title, async (t) => {
      const clock = clockFactory();
      const fixture = await make({ clock });
      const advance = async (ms: number): Promise<void> => {
        clock.advance(ms);
        await fixture.elapse?.(ms);
      };
      try {
        await body({ ...fixture, clock, t, advance });
      } finally {
        await fixture.cleanup();
      }
    });
  };
}

export function task(url: string, fields: Partial<NewTask> = {}): NewTask {
  return {
    runId: 'default',
    url,
    host: new URL(url).host,
    depth: 0,
    priority: 0,
    parentUrl: null,
    ...fields,
  };
}

export function tasks(prefix: string, n: number, fields: Partial<NewTask> = {}): NewTask[] {
  return Array.from({ length: n }, (_, i) => task(`${prefix}${i}`, fields));
}

export const urls = (items: readonly { url: string }[]): string[] => items.map((x) => x.url);

export const ref = (lease: Lease): Pick<Lease, 'taskId' | 'leaseId'> => ({
  taskId: lease.taskId,
  leaseId: lease.leaseId,
});

export async function ack(frontier: Frontier, lease: Lease, discovered?: NewTask[]): Promise<number> {
  const result = await frontier.settle({
    acks: [{ lease: ref(lease), ...(discovered === undefined ? {} : { discovered }) }],
    retries: [],
    failures: [],
  });
  return result.applied;
}

/** Leases until nothing is ready, in batches of `batch`. */
export async function leaseAll(frontier: Frontier, leaseMs = 60_000, batch = 50): Promise<Lease[]> {
  const all: Lease[] = [];
  for (;;) {
    const got = await frontier.lease(batch, { leaseMs });
    if (got.length === 0) return all;
    all.push(...got);
  }
}

/** The one-of-each-state invariant every stats() answer keeps. */
export async function assertStatsAddUp(frontier: Frontier): Promise<void> {
  const s = await frontier.stats();
  assert.equal(s.ready + s.delayed + s.leased + s.done + s.failed, s.total, JSON.stringify(s));
}
