import type { RunRepository, RunRow, RunStall, RunState } from '../../../ports/sql-store.js';
import { HIGHEST, decodeCursor, encodeCursor } from '../cursor.js';
import type { SqlValue } from '../driver.js';
import { toRun } from '../rows.js';
import { MAX_STATES } from '../statements.js';
import {
  finite,
  json,
  key,
  limitOf,
  optionalKey,
  optionalText,
  optionalWhole,
  state,
  text,
  whole,
} from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'runs';

type Patch = Partial<Pick<RunRow, 'startedAt' | 'endedAt' | 'error' | 'schedulerId' | 'heartbeatAt'>>;

const distinctStates = (states: readonly RunState[]): RunState[] =>
  [...new Set(states.map(state))].slice(0, MAX_STATES);

/** A (set?, value) pair per patchable column, in the order runTransition binds them. */
function patchParams(patch: Patch): SqlValue[] {
  const pair = (value: SqlValue | undefined): SqlValue[] => (value === undefined ? [0, null] : [1, value]);
  return [
    ...pair(patch.startedAt === undefined ? undefined : optionalWhole('startedAt', patch.startedAt)),
    ...pair(patch.endedAt === undefined ? undefined : optionalWhole('endedAt', patch.endedAt)),
    ...pair(patch.error === undefined ? undefined : optionalText(patch.error)),
    ...pair(patch.schedulerId === undefined ? undefined : optionalKey('schedulerId', patch.schedulerId)),
    ...pair(patch.heartbeatAt === undefined ? undefined : optionalWhole('heartbeatAt', patch.heartbeatAt)),
  ];
}

/** stall_since, stall: both NULL when the scheduler is not stalled. */
function stallParams(stall: RunStall | undefined): SqlValue[] {
  return stall === undefined ? [null, null] : [whole('stall.since', stall.since), text(stall.reason)];
}

export function runRepository(ctx: StoreContext): RunRepository {
  const { driver, sql, guard } = ctx;
  return {
    create: (run) =>
      guard('runs.create', async () => {
        const settings = json(run.settings);
        const c = run.counters;
        await driver.run(sql.runInsert, [
          key('id', run.id),
          key('jobId', run.jobId),
          state(run.state),
          settings,
          whole('counters.done', c.done),
          whole('counters.failed', c.failed),
          whole('counters.queued', c.queued),
          whole('counters.inFlight', c.inFlight),
          finite('counters.pagesPerSecond', c.pagesPerSecond),
          whole('createdAt', run.createdAt),
          optionalWhole('startedAt', run.startedAt),
          optionalWhole('endedAt', run.endedAt),
          optionalKey('schedulerId', run.schedulerId),
          optionalWhole('heartbeatAt', run.heartbeatAt),
          optionalText(run.error),
          whole('counters.notModified', c.notModified),
          optionalKey('scheduledBy.scheduleId', run.scheduledBy?.scheduleId ?? null),
          optionalWhole('scheduledBy.fireAt', run.scheduledBy?.fireAt ?? null),
          ...stallParams(run.stall),
        ]);
        return {
          ...run,
          counters: { ...c },
          settings: JSON.parse(settings) as unknown,
          scheduledBy: run.scheduledBy === null ? null : { ...run.scheduledBy },
          ...(run.stall ? { stall: { ...run.stall } } : {}),
        };
      }),

    get: (id) =>
      guard('runs.get', async () => {
        const [row] = await driver.all(sql.runGet, [id]);
        return row === undefined ? null : toRun(row);
      }),

    list: (query) =>
      guard('runs.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [HIGHEST.number, HIGHEST.string];
        const states = query?.states === undefined ? [] : distinctStates(query.states);
        if (query?.states !== undefined && states.length === 0) return { items: [], next: null };
        const job = query?.jobId !== undefined;
        const params: SqlValue[] = [at, id, limit + 1, ...(job ? [query.jobId ?? ''] : []), ...states];
        const rows = await driver.all(sql.runList({ job, states: states.length }), params);
        return toPage(rows, limit, toRun, (r) => encodeCursor(LIST, [r.createdAt, r.id]));
      }),

    transition: (id, from, to, patch = {}) =>
      guard('runs.transition', () => {
        const fromStates = distinctStates(from);
        const params = [id, state(to), ...patchParams(patch), ...fromStates];
        if (fromStates.length === 0) return Promise.resolve(null);
        return driver.transaction(async (s) => {
          if ((await s.run(sql.runTransition(fromStates.length), params)) === 0) return null;
          const [row] = await s.all(sql.runGet, [id]);
          return row === undefined ? null : toRun(row);
        });
      }),

    report: (reports) =>
      guard('runs.report', async () => {
        if (reports.length === 0) return;
        const rows = reports.map((r) => [
          r.id,
          whole('counters.done', r.counters.done),
          whole('counters.failed', r.counters.failed),
          whole('counters.queued', r.counters.queued),
          whole('counters.inFlight', r.counters.inFlight),
          finite('counters.pagesPerSecond', r.counters.pagesPerSecond),
          key('schedulerId', r.schedulerId),
          whole('at', r.at),
          whole('counters.notModified', r.counters.notModified),
          ...stallParams(r.stall),
        ]);
        await driver.transaction(async (s) => {
          for (const params of rows) await s.run(sql.runReport, params);
        });
      }),

    delete: (id, states) =>
      guard('runs.delete', () => {
        const allowed = distinctStates(states);
        if (allowed.length === 0) return Promise.resolve(false);
        return driver.transaction(async (s) => {
          if ((await s.run(sql.runDelete(allowed.length), [id, ...allowed])) === 0) return false;
          for (const statement of sql.runForget) await s.run(statement, [id]);
          return true;
        });
      }),

    endedBefore: (at, limit) =>
      guard('runs.endedBefore', async () => {
        const rows = await driver.all(sql.runEndedBefore, [whole('at', at), limitOf({ limit })]);
        return rows.map((row) => String(row.id));
      }),

    endedSince: (at, limit) =>
      guard('runs.endedSince', async () => {
        const rows = await driver.all(sql.alerts.runEndedSince, [whole('at', at), limitOf({ limit })]);
        return rows.map(toRun);
      }),
  };
}
