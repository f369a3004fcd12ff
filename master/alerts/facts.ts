import type { LogCount, RunRow, SqlStore } from '../../shared/ports/sql-store.js';

/** A fact the engine may or may not have: a rule on an unavailable fact says why it cannot tell. */
export type Fact<T> = { available: true; value: T } | { available: false; reason: string };

export interface LostAgent {
  agentId: string;
  host: string | null;
  /** Its last heartbeat. */
  lastSeenAt: number | null;
}

export interface CrashLoop {
  agentId: string;
  /** The crawler process's id on its agent. */
  processId: string;
  restarts: number | null;
  since: number | null;
}

/**
 * What the alert rules read. Every rule is a question over these, so the engine can be driven in
 * tests with real stores and real values, and the fleet's facts plug in when they exist.
 */
export interface AlertFacts {
  /** Agents the master marked `lost` (store.agents, state 'lost'). */
  lostAgents(): Promise<Fact<LostAgent[]>>;
  /** Crawler processes in a crash loop (their state 'crash-loop'). */
  crashLoops(): Promise<Fact<CrashLoop[]>>;
  /** Runs stored `running`, with their counters and heartbeats. */
  runningRuns(): Promise<RunRow[]>;
  /** Runs that ended at or after `at`, soonest end first (at most `limit`). */
  runsEndedSince(at: number, limit: number): Promise<RunRow[]>;
  /** Retries and final failures logged since `at`, by run and code. */
  failuresSince(at: number): Promise<LogCount[]>;
  /** Messages in the dead-letter queue (`<prefix>.failed`) now. */
  deadLetterDepth(): Promise<Fact<{ queue: string; depth: number }>>;
}

export interface StoreFactsOptions {
  store: SqlStore;
  /** The fleet's lost agents; absent until the fleet is wired (the rule then says so). */
  lostAgents?: () => Promise<LostAgent[]>;
  crashLoops?: () => Promise<CrashLoop[]>;
  /** The dead-letter queue's depth (dead-letter-depth.ts); absent without RabbitMQ. */
  deadLetterDepth?: () => Promise<{ queue: string; depth: number }>;
  /** Why there is no dead-letter depth, for the rule's status. */
  noDeadLetterReason?: string;
}

const unavailable = <T>(reason: string): Fact<T> => ({ available: false, reason });

async function fact<T>(read: () => Promise<T>, what: string): Promise<Fact<T>> {
  try {
    return { available: true, value: await read() };
  } catch (err) {
    return unavailable(`${what} could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The facts from what the master has: the SQL store, and whatever readers it was given. */
export function createStoreFacts(options: StoreFactsOptions): AlertFacts {
  const { store } = options;
  return {
    lostAgents: () =>
      options.lostAgents
        ? fact(options.lostAgents, 'the lost agents')
        : Promise.resolve(unavailable('the fleet view (store.agents) is not wired into the alert engine')),
    crashLoops: () =>
      options.crashLoops
        ? fact(options.crashLoops, 'the crash loops')
        : Promise.resolve(unavailable('the fleet view (store.agents) is not wired into the alert engine')),
    async runningRuns() {
      const out: RunRow[] = [];
      let after: string | null = null;
      for (let i = 0; i < 100; i += 1) {
        const page = await store.runs.list({ states: ['running'], limit: 500, after });
        out.push(...page.items);
        if (page.next === null) break;
        after = page.next;
      }
      return out;
    },
    runsEndedSince: (at, limit) => store.runs.endedSince(at, limit),
    failuresSince: (at) => store.logs.countSince(at),
    deadLetterDepth: () =>
      options.deadLetterDepth
        ? fact(options.deadLetterDepth, 'the dead-letter queue')
        : Promise.resolve(
            unavailable(
              options.noDeadLetterReason ?? 'the master has no RabbitMQ URL: no dead-letter queue to watch',
            ),
          ),
  };
}
