import { startPeriodicPass, type PeriodicPass } from '../../shared/lifecycle/periodic-pass.js';
import type { Logger } from '../../shared/logger.js';
import type { AlertRow, AlertRuleRow, WebhookRow } from '../../shared/ports/alert-store.js';
import type { Page, PageQuery, RunRow, SqlStore } from '../../shared/ports/sql-store.js';
import { ConditionMemory, evaluateCondition, type Observation } from './conditions.js';
import { alertData, deliveriesFor, eventBody } from './events.js';
import type { AlertFacts } from './facts.js';
import { EVENT_KINDS, RULE_PARAMS } from './rule-params.js';

/** What the engine last made of a rule (shown by GET /api/v1/alert-rules/{id}). */
export interface RuleStatus {
  evaluatedAt: number;
  available: boolean;
  /** Why the rule cannot tell (its fact is unavailable, its params do not parse). */
  reason: string | null;
}

export interface AlertEngineDeps {
  store: SqlStore;
  facts: AlertFacts;
  clock: { now(): number };
  newId: () => string;
  logger: Logger;
  /** A newly made rule, or a master back after a while, tells of runs that ended at most this long ago. */
  runLookbackMs?: number;
}

const RUN_STATE_EVENT: Record<string, string> = {
  'run.succeeded': 'succeeded',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
};

async function everything<T>(list: (q: PageQuery) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let after: string | null = null;
  for (let i = 0; i < 1_000; i += 1) {
    const page = await list({ limit: 500, after });
    out.push(...page.items);
    if (page.next === null) break;
    after = page.next;
  }
  return out;
}

/**
 * The alert engine: each pass reads the enabled rules, asks the facts, and makes SQL agree with
 * what holds. A condition that starts to hold on a subject opens one alert (the store refuses a
 * second one on the same rule and subject, whichever master tries) with its deliveries in the
 * same transaction; one that stops holding resolves it with a `….resolved` event. A run's end is a
 * one-off event per rule and run. Nothing is resolved on a fact that is unavailable: the rule's
 * status says why instead.
 */
/** How far back each pass looks again for runs that ended (late commits, clock skew between masters). */
const END_MARGIN_MS = 60_000;

export function createAlertEngine(deps: AlertEngineDeps) {
  const { store, facts, logger } = deps;
  const lookbackMs = deps.runLookbackMs ?? 24 * 60 * 60 * 1000;
  const statuses = new Map<string, RuleStatus>();
  const memories = new Map<string, ConditionMemory>();
  /** Per event rule: runs that ended before this were already looked at. */
  const watermarks = new Map<string, number>();

  const open = async (
    rule: AlertRuleRow,
    type: string,
    state: 'active' | 'event',
    o: Observation,
    webhooks: WebhookRow[],
  ) => {
    const now = deps.clock.now();
    const alert: AlertRow = {
      id: deps.newId(),
      ruleId: rule.id,
      subject: o.subject,
      type,
      state,
      data: o.data,
      openedAt: now,
      resolvedAt: null,
    };
    const body = eventBody(type, now, alertData(alert, rule.name, null));
    if (await store.alerts.open(alert, deliveriesFor(webhooks, alert.id, type, body, now))) {
      logger.info({ alertId: alert.id, ruleId: rule.id, type, subject: o.subject }, 'alert raised');
    }
  };

  const resolve = async (alert: AlertRow, ruleName: string, webhooks: WebhookRow[], why?: string) => {
    const now = deps.clock.now();
    const type = `${alert.type}.resolved`;
    const data = { ...alertData(alert, ruleName, now), ...(why ? { reason: why } : {}) };
    const body = eventBody(type, now, data);
    if (await store.alerts.resolve(alert.id, now, deliveriesFor(webhooks, alert.id, type, body, now))) {
      logger.info(
        { alertId: alert.id, ruleId: alert.ruleId, type, subject: alert.subject },
        'alert resolved',
      );
    }
  };

  const runEvents = async (rule: AlertRuleRow, webhooks: WebhookRow[], now: number) => {
    const wanted = RUN_STATE_EVENT[rule.kind];
    let since = watermarks.get(rule.id) ?? Math.max(rule.createdAt, now - lookbackMs);
    for (let i = 0; i < 100; i += 1) {
      const runs: RunRow[] = await facts.runsEndedSince(since, 500);
      for (const run of runs) {
        if (run.state !== wanted) continue;
        await open(
          rule,
          rule.kind,
          'event',
          {
            subject: run.id,
            data: {
              runId: run.id,
              jobId: run.jobId,
              runState: run.state,
              error: run.error,
              counters: run.counters,
              startedAt: run.startedAt === null ? null : new Date(run.startedAt).toISOString(),
              endedAt: run.endedAt === null ? null : new Date(run.endedAt).toISOString(),
            },
          },
          webhooks,
        );
      }
      const last = runs.at(-1)?.endedAt ?? null;
      // The last end time is looked at again next pass: a run that ends in the same millisecond is not missed.
      if (last !== null) since = Math.max(since, last);
      if (runs.length < 500 || last === null) break;
    }
    // The next pass looks a minute further back: a run whose end was committed late (a slow
    // transaction, another master's clock behind ours) is still seen. Telling of a run twice is
    // refused by the store (one event per rule and run), so looking again costs only the reads.
    watermarks.set(rule.id, Math.max(rule.createdAt, since - END_MARGIN_MS));
  };

  const evaluate = async (
    rule: AlertRuleRow,
    active: AlertRow[],
    webhooks: WebhookRow[],
  ): Promise<RuleStatus> => {
    const now = deps.clock.now();
    const parsed = RULE_PARAMS[rule.kind].safeParse(rule.params);
    if (!parsed.success)
      return {
        evaluatedAt: now,
        available: false,
        reason: `its params do not validate: ${parsed.error.message}`,
      };
    if (EVENT_KINDS.includes(rule.kind)) {
      await runEvents(rule, webhooks, now);
      return { evaluatedAt: now, available: true, reason: null };
    }
    let memory = memories.get(rule.id);
    if (memory === undefined) memories.set(rule.id, (memory = new ConditionMemory()));
    const result = await evaluateCondition(rule.kind as never, parsed.data as never, facts, memory, now);
    if (!result.available) return { evaluatedAt: now, available: false, reason: result.reason };
    const holding = new Map(result.holding.map((o) => [o.subject, o]));
    const mine = active.filter((a) => a.ruleId === rule.id);
    for (const o of holding.values()) {
      if (!mine.some((a) => a.subject === o.subject)) await open(rule, rule.kind, 'active', o, webhooks);
    }
    for (const a of mine) {
      if (!holding.has(a.subject) && !result.undecided?.has(a.subject)) await resolve(a, rule.name, webhooks);
    }
    return { evaluatedAt: now, available: true, reason: null };
  };

  return {
    /** One pass over every rule. A rule that fails is logged and skipped; the others still run. */
    async tick(): Promise<void> {
      const rules = await everything((q) => store.alertRules.list(q));
      const webhooks = (await everything((q) => store.webhooks.list(q))).filter((w) => w.enabled);
      const active = await everything((q) => store.alerts.list({ ...q, states: ['active'] }));
      const enabled = new Map(rules.filter((r) => r.enabled).map((r) => [r.id, r]));
      for (const rule of enabled.values()) {
        try {
          statuses.set(rule.id, await evaluate(rule, active, webhooks));
        } catch (err) {
          logger.warn({ err, ruleId: rule.id, kind: rule.kind }, 'alert rule not evaluated this pass');
          statuses.set(rule.id, {
            evaluatedAt: deps.clock.now(),
            available: false,
            reason: err instanceof Error ? err.message : String(err),
          });
        }
      }
      // A rule deleted or disabled while its alert was active: the alert ends with it.
      const names = new Map(rules.map((r) => [r.id, r.name]));
      for (const a of active) {
        if (enabled.has(a.ruleId)) continue;
        await resolve(
          a,
          names.get(a.ruleId) ?? a.ruleId,
          webhooks,
          names.has(a.ruleId) ? 'its rule was disabled' : 'its rule was deleted',
        );
      }
      for (const id of statuses.keys()) if (!enabled.has(id)) statuses.delete(id);
    },
    status(ruleId: string): RuleStatus | null {
      return statuses.get(ruleId) ?? null;
    },
  };
}

export type AlertEngine = ReturnType<typeof createAlertEngine>;

/** Runs the engine every `intervalMs`; passes never overlap; close() waits for the one in flight. */
export function startAlertLoop(
  engine: AlertEngine,
  options: { intervalMs: number; logger: Logger },
): Pick<PeriodicPass<void>, 'runOnce' | 'close'> {
  return startPeriodicPass(() => engine.tick(), {
    intervalMs: options.intervalMs,
    onError: (err) => options.logger.warn({ err }, 'alert pass failed'),
  });
}
