import {
  ALERT_STATES,
  type AlertRepository,
  type AlertRow,
  type AlertState,
} from '../../../ports/alert-store.js';
import { toAlert } from '../alert-rows.js';
import { HIGHEST, decodeCursor, encodeCursor } from '../cursor.js';
import { KEY_LENGTHS } from '../migrations.js';
import { MAX_STATES } from '../statements.js';
import { json, key, limitOf, oneOf, optionalWhole, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';
import { insertDeliveries } from './deliveries.js';

const LIST = 'alerts';

/** Unique while it matters: one active alert per rule and subject; one event per rule and subject. */
function dedupeKey(alert: Pick<AlertRow, 'ruleId' | 'subject' | 'state' | 'id'>): string {
  const how = alert.state === 'resolved' ? alert.id : alert.state;
  return `${alert.ruleId}|${alert.subject}|${how}`;
}

export function alertRepository(ctx: StoreContext): AlertRepository {
  const { driver, guard } = ctx;
  const sql = ctx.sql.alerts;
  return {
    open: (alert, deliveries) =>
      guard('alerts.open', async () => {
        const data = json(alert.data);
        const params = [
          key('id', alert.id),
          key('ruleId', alert.ruleId),
          key('subject', alert.subject, KEY_LENGTHS.subject),
          key('type', alert.type, KEY_LENGTHS.code),
          oneOf('state', alert.state, ALERT_STATES),
          key('dedupeKey', dedupeKey(alert), KEY_LENGTHS.dedupe),
          data,
          whole('openedAt', alert.openedAt),
          optionalWhole('resolvedAt', alert.resolvedAt),
        ];
        try {
          await driver.transaction(async (s) => {
            await s.run(sql.alertInsert, params);
            await insertDeliveries(s, sql.deliveryInsert, deliveries);
          });
          return true;
        } catch (err) {
          const mapped = driver.toError(err, 'alerts.open');
          if (mapped.code === 'SQL_CONFLICT' && mapped.details?.field === 'dedupeKey') return false;
          throw mapped;
        }
      }),

    resolve: (id, at, deliveries) =>
      guard('alerts.resolve', () =>
        driver.transaction(async (s) => {
          const [row] = await s.all(sql.alertGet, [id]);
          if (row === undefined) return false;
          const alert = toAlert(row);
          const freed = key('dedupeKey', dedupeKey({ ...alert, state: 'resolved' }), KEY_LENGTHS.dedupe);
          if ((await s.run(sql.alertResolve, [id, whole('at', at), freed])) === 0) return false;
          await insertDeliveries(s, sql.deliveryInsert, deliveries);
          return true;
        }),
      ),

    get: (id) =>
      guard('alerts.get', async () => {
        const [row] = await driver.all(sql.alertGet, [id]);
        return row === undefined ? null : toAlert(row);
      }),

    list: (query) =>
      guard('alerts.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [HIGHEST.number, HIGHEST.string];
        const states: AlertState[] =
          query?.states === undefined
            ? []
            : [...new Set(query.states.map((s) => oneOf('states', s, ALERT_STATES)))].slice(0, MAX_STATES);
        if (query?.states !== undefined && states.length === 0) return { items: [], next: null };
        const rows = await driver.all(sql.alertList(states.length), [at, id, limit + 1, ...states]);
        return toPage(rows, limit, toAlert, (a) => encodeCursor(LIST, [a.openedAt, a.id]));
      }),
  };
}
