import { ALERT_RULE_KINDS, type AlertRuleRepository } from '../../../ports/alert-store.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import { toRule } from '../alert-rows.js';
import { KEY_LENGTHS } from '../migrations.js';
import { json, key, limitOf, oneOf, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'alert-rules';

export function alertRuleRepository(ctx: StoreContext): AlertRuleRepository {
  const { driver, guard } = ctx;
  const sql = ctx.sql.alerts;
  return {
    create: (rule) =>
      guard('alertRules.create', async () => {
        const params = json(rule.params);
        await driver.run(sql.ruleInsert, [
          key('id', rule.id),
          key('name', rule.name, KEY_LENGTHS.name),
          oneOf('kind', rule.kind, ALERT_RULE_KINDS),
          params,
          rule.enabled ? 1 : 0,
          whole('createdAt', rule.createdAt),
          whole('updatedAt', rule.updatedAt),
        ]);
        return { ...rule, params: JSON.parse(params) as unknown };
      }),

    get: (id) =>
      guard('alertRules.get', async () => {
        const [row] = await driver.all(sql.ruleGet, [id]);
        return row === undefined ? null : toRule(row);
      }),

    list: (query) =>
      guard('alertRules.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.ruleList, [at, id, limit + 1]);
        return toPage(rows, limit, toRule, (r) => encodeCursor(LIST, [r.createdAt, r.id]));
      }),

    update: (id, patch) =>
      guard('alertRules.update', () =>
        driver.transaction(async (s) => {
          const name = patch.name === undefined ? null : key('name', patch.name, KEY_LENGTHS.name);
          const params = patch.params === undefined ? null : json(patch.params);
          const changed = await s.run(sql.ruleUpdate, [
            id,
            name === null ? 0 : 1,
            name,
            params === null ? 0 : 1,
            params,
            patch.enabled === undefined ? 0 : 1,
            patch.enabled === undefined ? null : patch.enabled ? 1 : 0,
            whole('updatedAt', patch.updatedAt),
          ]);
          if (changed === 0) return null;
          const [row] = await s.all(sql.ruleGet, [id]);
          return row === undefined ? null : toRule(row);
        }),
      ),

    delete: (id) => guard('alertRules.delete', async () => (await driver.run(sql.ruleDelete, [id])) > 0),
  };
}
