import type { WebhookRepository } from '../../../ports/alert-store.js';
import { toWebhook } from '../alert-rows.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import type { SqlValue } from '../driver.js';
import { KEY_LENGTHS } from '../migrations.js';
import { key, limitOf, optionalText, text, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'webhooks';

function eventTypes(values: readonly string[]): string {
  return JSON.stringify([...new Set(values.map((v) => key('eventTypes', v, KEY_LENGTHS.code)))]);
}

export function webhookRepository(ctx: StoreContext): WebhookRepository {
  const { driver, guard } = ctx;
  const sql = ctx.sql.alerts;
  return {
    create: (w) =>
      guard('webhooks.create', async () => {
        const types = eventTypes(w.eventTypes);
        await driver.run(sql.webhookInsert, [
          key('id', w.id),
          text(w.url),
          text(w.description),
          text(w.secret),
          types,
          w.enabled ? 1 : 0,
          optionalText(w.disabledReason),
          whole('createdAt', w.createdAt),
          whole('updatedAt', w.updatedAt),
        ]);
        return { ...w, eventTypes: JSON.parse(types) as string[] };
      }),

    get: (id) =>
      guard('webhooks.get', async () => {
        const [row] = await driver.all(sql.webhookGet, [id]);
        return row === undefined ? null : toWebhook(row);
      }),

    list: (query) =>
      guard('webhooks.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.webhookList, [at, id, limit + 1]);
        return toPage(rows, limit, toWebhook, (w) => encodeCursor(LIST, [w.createdAt, w.id]));
      }),

    update: (id, patch) =>
      guard('webhooks.update', () =>
        driver.transaction(async (s) => {
          const pair = (value: SqlValue | undefined): SqlValue[] =>
            value === undefined ? [0, null] : [1, value];
          const changed = await s.run(sql.webhookUpdate, [
            id,
            ...pair(patch.url === undefined ? undefined : text(patch.url)),
            ...pair(patch.description === undefined ? undefined : text(patch.description)),
            ...pair(patch.eventTypes === undefined ? undefined : eventTypes(patch.eventTypes)),
            ...pair(patch.enabled === undefined ? undefined : patch.enabled ? 1 : 0),
            ...(patch.disabledReason === undefined ? [0, null] : [1, optionalText(patch.disabledReason)]),
            whole('updatedAt', patch.updatedAt),
          ]);
          if (changed === 0) return null;
          const [row] = await s.all(sql.webhookGet, [id]);
          return row === undefined ? null : toWebhook(row);
        }),
      ),

    delete: (id) =>
      guard('webhooks.delete', () =>
        driver.transaction(async (s) => {
          await s.run(sql.deliveryDeleteByWebhook, [id]);
          return (await s.run(sql.webhookDelete, [id])) > 0;
        }),
      ),
  };
}
