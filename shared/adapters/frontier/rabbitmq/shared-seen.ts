import { createHash } from 'node:crypto';
import type { Logger } from '../../../logger.js';
import type { SchedulerRunCounts, SeenRepository } from '../../../ports/sql-store.js';
import type { RunCounts } from './shard-membership.js';
import type { NewTask } from '../../../protocol/task.js';

/**
 * The seen-set shared by the schedulers that split a prefix's hosts, beside each one's ledger.
 * A URL is claimed there after its message is confirmed, so a crash between the two leaves a URL
 * published and unclaimed (a second copy at worst, if another scheduler discovers it), never a
 * claim with no message.
 */
export interface SharedSeen {
  /** `tasks` split into those no scheduler has claimed and those one has. */
  sort(tasks: readonly NewTask[]): Promise<{ unseen: NewTask[]; seen: NewTask[] }>;
  /** Claims the tasks (their messages are confirmed): those this scheduler won, and the others. */
  claim(tasks: readonly NewTask[]): Promise<{ won: NewTask[]; lost: NewTask[] }>;
  /** The run is gone: its keys are forgotten, and every scheduler's counters of it. */
  forget(runId: string): Promise<void>;
  /** Writes this scheduler's counters of the runs (its ledger's). False when out of reach. */
  report(counts: readonly SchedulerRunCounts[]): Promise<boolean>;
  /**
   * The other schedulers' counters of the prefix's runs, by scheduler id, as each last wrote them;
   * null when out of reach. A scheduler that died stays in it: its pages stay in its runs' counters.
   */
  othersCounts(): Promise<Map<string, Record<string, RunCounts>> | null>;
}

/** A URL's key in the set: 32 hex digits of its SHA-256. */
export function urlKey(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 32);
}

/**
 * The tasks by run, each with its key. A batch's fresh tasks are sorted, then the same objects
 * claimed: `keys` remembers their keys so each URL is hashed once.
 */
function byRun(
  tasks: readonly NewTask[],
  keys: WeakMap<NewTask, string>,
): Map<string, { task: NewTask; key: string }[]> {
  const runs = new Map<string, { task: NewTask; key: string }[]>();
  for (const task of tasks) {
    let list = runs.get(task.runId);
    if (list === undefined) runs.set(task.runId, (list = []));
    let key = keys.get(task);
    if (key === undefined) keys.set(task, (key = urlKey(task.url)));
    list.push({ task, key });
  }
  return runs;
}

export interface SqlSharedSeenOptions {
  repo: SeenRepository;
  /** The frontier's queue prefix: the set's scope. */
  scope: string;
  schedulerId: string;
  clock: () => number;
  logger: Logger;
}

/**
 * The shared seen-set in the SQL store (SqlStore.seen). When the store cannot be reached, each
 * scheduler falls back on its own ledger: `sort` calls every task unseen and `claim` calls every
 * task won, so the crawl goes on and nothing is lost; the price is what the set exists to avoid,
 * a URL found through two schedulers fetched and counted twice. That is logged once per outage.
 */
export function sqlSharedSeen(options: SqlSharedSeenOptions): SharedSeen {
  const { repo, scope, schedulerId, clock, logger } = options;
  const keys = new WeakMap<NewTask, string>();
  let down = false;
  const fallBack = (err: unknown, op: string): void => {
    if (down) return;
    down = true;
    logger.warn(
      { err, op },
      'the shared seen-set is out of reach: each scheduler dedups on its own ledger until it is back; URLs found through two schedulers meanwhile may be fetched twice',
    );
  };
  const back = (): void => {
    if (!down) return;
    down = false;
    logger.info('the shared seen-set answers again');
  };

  return {
    async sort(tasks) {
      if (tasks.length === 0) return { unseen: [], seen: [] };
      const unseen: NewTask[] = [];
      const seen: NewTask[] = [];
      try {
        for (const [runId, items] of byRun(tasks, keys)) {
          const known = await repo.known(
            scope,
            runId,
            items.map((i) => i.key),
          );
          for (const { task, key } of items) (known.has(key) ? seen : unseen).push(task);
        }
      } catch (err) {
        fallBack(err, 'sort');
        return { unseen: [...tasks], seen: [] };
      }
      back();
      return { unseen, seen };
    },

    async claim(tasks) {
      if (tasks.length === 0) return { won: [], lost: [] };
      const won: NewTask[] = [];
      const lost: NewTask[] = [];
      const runs = byRun(tasks, keys);
      const done = new Set<string>();
      try {
        for (const [runId, items] of runs) {
          const claimed = await repo.claim(
            scope,
            runId,
            items.map((i) => i.key),
            { schedulerId, at: clock() },
          );
          for (const { task, key } of items) (claimed.has(key) ? won : lost).push(task);
          done.add(runId);
        }
      } catch (err) {
        fallBack(err, 'claim');
        for (const [runId, items] of runs) if (!done.has(runId)) won.push(...items.map((i) => i.task));
        return { won, lost };
      }
      back();
      return { won, lost };
    },

    async forget(runId) {
      try {
        await repo.forget(scope, runId);
      } catch (err) {
        logger.warn({ err, runId }, "could not forget a purged run's shared seen-set; its rows stay");
      }
    },

    async report(counts) {
      try {
        await repo.reportCounts(scope, schedulerId, clock(), counts);
      } catch (err) {
        fallBack(err, 'report');
        return false;
      }
      back();
      return true;
    },

    async othersCounts() {
      let rows;
      try {
        rows = await repo.listCounts(scope);
      } catch (err) {
        fallBack(err, 'othersCounts');
        return null;
      }
      back();
      const others = new Map<string, Record<string, RunCounts>>();
      for (const row of rows) {
        if (row.schedulerId === schedulerId) continue;
        let runs = others.get(row.schedulerId);
        if (runs === undefined) others.set(row.schedulerId, (runs = {}));
        runs[row.runId] = [row.total, row.done, row.failed];
      }
      return others;
    },
  };
}
