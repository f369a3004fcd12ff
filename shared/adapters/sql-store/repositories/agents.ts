import type { AgentRepository, AgentRow, ProcessRow, SlotOrders } from '../../../ports/sql-store.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import type { SqlSession, SqlValue } from '../driver.js';
import { KEY_LENGTHS } from '../migrations.js';
import { toAgent, toProcess } from '../rows.js';
import { PROCESS_INSERT_CHUNK } from '../statements.js';
import { finite, json, key, limitOf, optionalWhole, processState, text, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'agents';
const NO_ORDERS: SlotOrders = { stopped: [], restarts: {} };

type ProcessReport = Omit<ProcessRow, 'agentId' | 'reportedAt'>;

function processParams(agentId: string, at: number, p: ProcessReport): SqlValue[] {
  return [
    agentId,
    whole('slot', p.slot),
    optionalWhole('pid', p.pid),
    processState(p.state),
    optionalWhole('startedAt', p.startedAt),
    whole('restarts', p.restarts),
    whole('inFlight', p.inFlight),
    whole('pagesDone', p.pagesDone),
    whole('errors', p.errors),
    whole('rssBytes', p.rssBytes),
    finite('cpuSeconds', p.cpuSeconds),
    at,
  ];
}

/** Slot orders as stored: whole slots, each stopped slot once, sorted. */
function cleanOrders(orders: SlotOrders): SlotOrders {
  const stopped = [...new Set(orders.stopped.map((s) => whole('orders.stopped', s)))].sort((a, b) => a - b);
  const restarts: Record<string, number> = {};
  for (const [slot, n] of Object.entries(orders.restarts)) restarts[slot] = whole('orders.restarts', n);
  return { stopped, restarts };
}

/**
 * The fleet's rows. A heartbeat replaces the agent's process rows in one transaction, so a
 * reader sees one report or the next, never half of each.
 */
export function agentRepository(ctx: StoreContext): AgentRepository {
  const { driver, sql, guard } = ctx;

  const getIn = async (s: SqlSession, id: string): Promise<AgentRow | null> => {
    const [row] = await s.all(sql.agentGet, [id]);
    return row === undefined ? null : toAgent(row);
  };

  const replaceProcesses = async (
    s: SqlSession,
    id: string,
    at: number,
    processes: readonly ProcessReport[],
  ): Promise<void> => {
    const rows = processes.map((p) => processParams(id, at, p));
    await s.run(sql.processDelete, [id]);
    for (let i = 0; i < rows.length; i += PROCESS_INSERT_CHUNK) {
      const chunk = rows.slice(i, i + PROCESS_INSERT_CHUNK);
      await s.run(sql.processInsert(chunk.length), chunk.flat());
    }
  };

  return {
    register: (agent) =>
      guard('agents.register', () => {
        const params = [
          key('id', agent.id),
          key('name', agent.name, KEY_LENGTHS.name),
          key('hostname', agent.hostname, KEY_LENGTHS.name),
          text(agent.url),
          json(agent.facts),
          whole('at', agent.at),
        ];
        return driver.transaction(async (s) => {
          if ((await s.run(sql.agentRegister, params)) === 0) {
            await s.run(sql.agentInsert, [
              params[0] ?? null,
              params[1] ?? null,
              params[2] ?? null,
              params[3] ?? null,
              'online',
              params[4] ?? null,
              params[5] ?? null,
              params[5] ?? null,
              whole('desiredProcesses', agent.desiredProcesses),
              0,
              json(NO_ORDERS),
            ]);
          }
          return (await getIn(s, agent.id)) as AgentRow;
        });
      }),

    heartbeat: (id, report) =>
      guard('agents.heartbeat', () => {
        const at = whole('at', report.at);
        const facts = json(report.facts);
        return driver.transaction(async (s) => {
          if ((await s.run(sql.agentHeartbeat, [id, facts, at])) === 0) return null;
          await replaceProcesses(s, id, at, report.processes);
          return getIn(s, id);
        });
      }),

    get: (id) => guard('agents.get', () => getIn(driver, id)),

    list: (query) =>
      guard('agents.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.agentList, [at, id, limit + 1]);
        return toPage(rows, limit, toAgent, (a) => encodeCursor(LIST, [a.registeredAt, a.id]));
      }),

    processes: (agentId) =>
      guard('agents.processes', async () => (await driver.all(sql.processList, [agentId])).map(toProcess)),

    processesIn: (state) =>
      guard('agents.processesIn', async () =>
        (await driver.all(sql.processListState, [processState(state)])).map(toProcess),
      ),

    setDesired: (id, patch) =>
      guard('agents.setDesired', () =>
        driver.transaction(async (s) => {
          const current = await getIn(s, id);
          if (current === null) return null;
          const desired =
            patch.desiredProcesses === undefined ? null : whole('desiredProcesses', patch.desiredProcesses);
          const orders = patch.orders === undefined ? null : json(cleanOrders(patch.orders(current.orders)));
          await s.run(sql.agentSetDesired, [
            id,
            desired === null ? 0 : 1,
            desired,
            patch.drain === undefined ? 0 : 1,
            patch.drain === undefined ? null : patch.drain ? 1 : 0,
            orders === null ? 0 : 1,
            orders,
          ]);
          await s.run(sql.agentSyncState, [id]);
          return getIn(s, id);
        }),
      ),

    markLost: (before) =>
      guard('agents.markLost', async () => {
        const stale = (await driver.all(sql.agentStale, [whole('before', before)])).map((r) => String(r.id));
        const lost: string[] = [];
        for (const id of stale) {
          const changed = await driver.transaction(async (s) => {
            if ((await s.run(sql.agentMarkLost, [id, before])) === 0) return false;
            await s.run(sql.processSetState, [id, 'lost']);
            return true;
          });
          if (changed) lost.push(id);
        }
        return lost;
      }),

    markStopped: (id, at) =>
      guard('agents.markStopped', () => {
        whole('at', at);
        return driver.transaction(async (s) => {
          if ((await s.run(sql.agentMarkStopped, [id])) === 0) return false;
          await s.run(sql.processSetState, [id, 'stopped']);
          return true;
        });
      }),

    forget: (id) =>
      guard('agents.forget', () =>
        driver.transaction(async (s) => {
          if ((await s.run(sql.agentForget, [id])) === 0) return false;
          await s.run(sql.processDelete, [id]);
          return true;
        }),
      ),
  };
}
