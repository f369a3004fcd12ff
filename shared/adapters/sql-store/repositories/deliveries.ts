import { DELIVERY_STATES, type DeliveryRepository, type DeliveryRow } from '../../../ports/alert-store.js';
import { toDelivery } from '../alert-rows.js';
import { HIGHEST, decodeCursor, encodeCursor } from '../cursor.js';
import type { SqlSession, SqlValue } from '../driver.js';
import { KEY_LENGTHS } from '../migrations.js';
import { key, limitOf, oneOf, optionalKey, optionalText, optionalWhole, text, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'deliveries';

function insertParams(d: DeliveryRow): SqlValue[] {
  return [
    key('id', d.id),
    key('webhookId', d.webhookId),
    optionalKey('alertId', d.alertId),
    key('eventType', d.eventType, KEY_LENGTHS.code),
    text(d.body),
    oneOf('state', d.state, DELIVERY_STATES),
    whole('attempts', d.attempts),
    optionalWhole('nextAttemptAt', d.nextAttemptAt),
    optionalWhole('lastStatus', d.lastStatus),
    optionalText(d.lastError),
    whole('createdAt', d.createdAt),
    whole('updatedAt', d.updatedAt),
    optionalWhole('deliveredAt', d.deliveredAt),
  ];
}

/** Inserts deliveries in the caller's transaction (an alert's, or create()'s own). */
export async function insertDeliveries(
  s: SqlSession,
  statement: string,
  rows: readonly DeliveryRow[],
): Promise<void> {
  const params = rows.map(insertParams);
  for (const p of params) await s.run(statement, p);
}

export function deliveryRepository(ctx: StoreContext): DeliveryRepository {
  const { driver, guard } = ctx;
  const sql = ctx.sql.alerts;
  return {
    create: (rows) =>
      guard('deliveries.create', async () => {
        if (rows.length === 0) return;
        rows.forEach(insertParams);
        await driver.transaction((s) => insertDeliveries(s, sql.deliveryInsert, rows));
      }),

    get: (id) =>
      guard('deliveries.get', async () => {
        const [row] = await driver.all(sql.deliveryGet, [id]);
        return row === undefined ? null : toDelivery(row);
      }),

    due: (now, limit) =>
      guard('deliveries.due', async () => {
        const rows = await driver.all(sql.deliveryDue, [whole('now', now), limitOf({ limit })]);
        return rows.map(toDelivery);
      }),

    claim: (id, expected, leaseUntil) =>
      guard(
        'deliveries.claim',
        async () =>
          (await driver.run(sql.deliveryClaim, [
            id,
            whole('expected', expected),
            whole('leaseUntil', leaseUntil),
          ])) > 0,
      ),

    record: (id, o) =>
      guard('deliveries.record', async () => {
        await driver.run(sql.deliveryRecord, [
          id,
          oneOf('state', o.state, DELIVERY_STATES),
          whole('attempts', o.attempts),
          optionalWhole('nextAttemptAt', o.nextAttemptAt),
          optionalWhole('lastStatus', o.lastStatus),
          optionalText(o.lastError),
          optionalWhole('deliveredAt', o.deliveredAt),
          whole('updatedAt', o.updatedAt),
        ]);
      }),

    listByWebhook: (webhookId, query) =>
      guard('deliveries.listByWebhook', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [HIGHEST.number, HIGHEST.string];
        const rows = await driver.all(sql.deliveryListByWebhook, [webhookId, at, id, limit + 1]);
        return toPage(rows, limit, toDelivery, (d) => encodeCursor(LIST, [d.createdAt, d.id]));
      }),
  };
}
