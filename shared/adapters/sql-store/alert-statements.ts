import { placeholderList } from './statements.js';

/**
 * The statements of the alerting tables (migration 4), one set per dialect, bound positionally
 * in the order each comment gives. SQLite and PostgreSQL share `$n`, row values and LIMIT; SQL
 * Server takes `@vn`, TOP and the keyset spelled out with OR (see mssql-statements.ts).
 */
export interface AlertStatements {
  /** id, name, kind, params, enabled, created_at, updated_at */
  ruleInsert: string;
  /** id */
  ruleGet: string;
  /** cursor created_at, cursor id, limit: oldest first */
  ruleList: string;
  /** id, set name (0/1), name, set params (0/1), params, set enabled (0/1), enabled, updated_at */
  ruleUpdate: string;
  /** id */
  ruleDelete: string;

  /** id, rule_id, subject, event_type, state, dedupe_key, data, opened_at, resolved_at */
  alertInsert: string;
  /** id, resolved_at, dedupe_key: only an active alert */
  alertResolve: string;
  /** id */
  alertGet: string;
  /** cursor opened_at, cursor id, limit, [states…]: newest first */
  alertList(states: number): string;

  /** every webhook column, in WEBHOOK_COLUMNS order */
  webhookInsert: string;
  /** id */
  webhookGet: string;
  /** cursor created_at, cursor id, limit: oldest first */
  webhookList: string;
  /**
   * id, then for url, description, event_types, enabled, disabled_reason each a (0/1, value)
   * pair, then updated_at
   */
  webhookUpdate: string;
  /** id */
  webhookDelete: string;
  /** webhook_id */
  deliveryDeleteByWebhook: string;

  /** every delivery column, in DELIVERY_COLUMNS order */
  deliveryInsert: string;
  /** id */
  deliveryGet: string;
  /** now, limit: pending and due, soonest first */
  deliveryDue: string;
  /** id, expected next_attempt_at, lease until */
  deliveryClaim: string;
  /** id, state, attempts, next_attempt_at, last_status, last_error, delivered_at, updated_at */
  deliveryRecord: string;
  /** webhook_id, cursor created_at, cursor id, limit: newest first */
  deliveryListByWebhook: string;

  /** at, limit: runs ended since, soonest end first */
  runEndedSince: string;
  /** at: log rows since, counted by run, code, final */
  logCountSince: string;
}

export const RULE_COLUMNS = 'id, name, kind, params, enabled, created_at, updated_at';
export const ALERT_COLUMNS =
  'id, rule_id, subject, event_type, state, dedupe_key, data, opened_at, resolved_at';
export const WEBHOOK_COLUMNS =
  'id, url, description, secret, event_types, enabled, disabled_reason, created_at, updated_at';
export const DELIVERY_COLUMNS =
  'id, webhook_id, alert_id, event_type, body, state, attempts, next_attempt_at, last_status, last_error, created_at, updated_at, delivered_at';
/** The runs columns (statements.ts RUN_COLUMNS), repeated to keep this file free of the run set. */
const RUN_COLUMNS =
  'id, job_id, state, settings, done, failed, queued, in_flight, pages_per_second, created_at, started_at, ended_at, scheduler_id, heartbeat_at, error, not_modified, schedule_id, fire_at, stall_since, stall';

type Placeholder = (n: number) => string;

interface Dialect {
  p: Placeholder;
  /** `SELECT <columns> FROM <rest>` paged by `limit` (a placeholder number), in the dialect's way. */
  top(columns: string, rest: string, limit: number): string;
  /** `(a, b) <op> (p(at), p(at + 1))` in the dialect's way. */
  keyset(first: string, second: string, op: '<' | '>', at: number): string;
}

function build(d: Dialect): AlertStatements {
  const { p } = d;
  const setIf = (column: string, flag: number): string =>
    `${column} = CASE WHEN ${p(flag)} = 1 THEN ${p(flag + 1)} ELSE ${column} END`;
  return {
    ruleInsert: `INSERT INTO alert_rules (${RULE_COLUMNS}) VALUES (${placeholderList(p, 1, 7)})`,
    ruleGet: `SELECT ${RULE_COLUMNS} FROM alert_rules WHERE id = ${p(1)}`,
    ruleList: d.top(
      RULE_COLUMNS,
      `alert_rules WHERE ${d.keyset('created_at', 'id', '>', 1)} ORDER BY created_at, id`,
      3,
    ),
    ruleUpdate: `UPDATE alert_rules SET ${setIf('name', 2)}, ${setIf('params', 4)}, ${setIf('enabled', 6)}, updated_at = ${p(8)} WHERE id = ${p(1)}`,
    ruleDelete: `DELETE FROM alert_rules WHERE id = ${p(1)}`,

    alertInsert: `INSERT INTO alerts (${ALERT_COLUMNS}) VALUES (${placeholderList(p, 1, 9)})`,
    alertResolve: `UPDATE alerts SET state = 'resolved', resolved_at = ${p(2)}, dedupe_key = ${p(3)} WHERE id = ${p(1)} AND state = 'active'`,
    alertGet: `SELECT ${ALERT_COLUMNS} FROM alerts WHERE id = ${p(1)}`,
    alertList: (states) =>
      d.top(
        ALERT_COLUMNS,
        `alerts WHERE ${d.keyset('opened_at', 'id', '<', 1)}` +
          (states > 0 ? ` AND state IN (${placeholderList(p, 4, states)})` : '') +
          ' ORDER BY opened_at DESC, id DESC',
        3,
      ),

    webhookInsert: `INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES (${placeholderList(p, 1, 9)})`,
    webhookGet: `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = ${p(1)}`,
    webhookList: d.top(
      WEBHOOK_COLUMNS,
      `webhooks WHERE ${d.keyset('created_at', 'id', '>', 1)} ORDER BY created_at, id`,
      3,
    ),
    webhookUpdate:
      `UPDATE webhooks SET ${setIf('url', 2)}, ${setIf('description', 4)}, ${setIf('event_types', 6)}, ` +
      `${setIf('enabled', 8)}, ${setIf('disabled_reason', 10)}, updated_at = ${p(12)} WHERE id = ${p(1)}`,
    webhookDelete: `DELETE FROM webhooks WHERE id = ${p(1)}`,
    deliveryDeleteByWebhook: `DELETE FROM webhook_deliveries WHERE webhook_id = ${p(1)}`,

    deliveryInsert: `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES (${placeholderList(p, 1, 13)})`,
    deliveryGet: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ${p(1)}`,
    deliveryDue: d.top(
      DELIVERY_COLUMNS,
      `webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ${p(1)} ORDER BY next_attempt_at, id`,
      2,
    ),
    deliveryClaim: `UPDATE webhook_deliveries SET next_attempt_at = ${p(3)} WHERE id = ${p(1)} AND state = 'pending' AND next_attempt_at = ${p(2)}`,
    deliveryRecord:
      `UPDATE webhook_deliveries SET state = ${p(2)}, attempts = ${p(3)}, next_attempt_at = ${p(4)}, ` +
      `last_status = ${p(5)}, last_error = ${p(6)}, delivered_at = ${p(7)}, updated_at = ${p(8)} WHERE id = ${p(1)}`,
    deliveryListByWebhook: d.top(
      DELIVERY_COLUMNS,
      `webhook_deliveries WHERE webhook_id = ${p(1)} AND ${d.keyset('created_at', 'id', '<', 2)} ORDER BY created_at DESC, id DESC`,
      4,
    ),

    runEndedSince: d.top(RUN_COLUMNS, `runs WHERE ended_at >= ${p(1)} ORDER BY ended_at, id`, 2),
    logCountSince: `SELECT run_id, code, final, COUNT(*) AS n FROM logs WHERE at >= ${p(1)} GROUP BY run_id, code, final`,
  };
}

const $ = (n: number): string => `$${n}`;
const v = (n: number): string => `@v${n}`;

export const ANSI_ALERT_STATEMENTS: AlertStatements = build({
  p: $,
  top: (columns, rest, limit) => `SELECT ${columns} FROM ${rest} LIMIT ${$(limit)}`,
  keyset: (first, second, op, at) => `(${first}, ${second}) ${op} (${$(at)}, ${$(at + 1)})`,
});

export const MSSQL_ALERT_STATEMENTS: AlertStatements = build({
  p: v,
  top: (columns, rest, limit) => `SELECT TOP (${v(limit)}) ${columns} FROM ${rest}`,
  keyset: (first, second, op, at) =>
    `(${first} ${op} ${v(at)} OR (${first} = ${v(at)} AND ${second} ${op} ${v(at + 1)}))`,
});
