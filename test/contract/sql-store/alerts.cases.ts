import assert from 'node:assert/strict';
import type { AlertRow, AlertRuleRow, DeliveryRow, WebhookRow } from '../../../shared/ports/alert-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, job, rejectsWith, run } from './expect.js';

let seq = 0;
const unique = (p: string): string => `${p}-${process.pid}-${++seq}`;

function rule(fields: Partial<AlertRuleRow> = {}): AlertRuleRow {
  return {
    id: unique('rule'),
    name: unique('rule name'),
    kind: 'run.failed',
    params: {},
    enabled: true,
    createdAt: 1_000,
    updatedAt: 1_000,
    ...fields,
  };
}

function alert(ruleId: string, fields: Partial<AlertRow> = {}): AlertRow {
  return {
    id: unique('alert'),
    ruleId,
    subject: 'agent-1',
    type: 'agent.lost',
    state: 'active',
    data: { agentId: 'agent-1' },
    openedAt: 5_000,
    resolvedAt: null,
    ...fields,
  };
}

function webhook(fields: Partial<WebhookRow> = {}): WebhookRow {
  return {
    id: unique('hook'),
    url: 'http://127.0.0.1:9/hook',
    description: 'on-call',
    secret: 'whsec_' + Buffer.from('a secret of 24 bytes ...').toString('base64'),
    eventTypes: [],
    enabled: true,
    disabledReason: null,
    createdAt: 1_000,
    updatedAt: 1_000,
    ...fields,
  };
}

function delivery(webhookId: string, fields: Partial<DeliveryRow> = {}): DeliveryRow {
  return {
    id: unique('msg'),
    webhookId,
    alertId: null,
    eventType: 'agent.lost',
    body: '{"type":"agent.lost","timestamp":"2026-01-01T00:00:00.000Z","data":{}}',
    state: 'pending',
    attempts: 0,
    nextAttemptAt: 5_000,
    lastStatus: null,
    lastError: null,
    createdAt: 5_000,
    updatedAt: 5_000,
    deliveredAt: null,
    ...fields,
  };
}

export function alertCases(define: DefineCase): void {
  define('alert rules: create, get, update, list, delete; names are unique', async ({ store }) => {
    const r = await store.alertRules.create(
      rule({ kind: 'errors.rate', params: { perMinute: 5, windowMs: 60_000 } }),
    );
    assert.deepEqual(await store.alertRules.get(r.id), r);
    await rejectsWith(store.alertRules.create(rule({ name: r.name })), 'SQL_CONFLICT', { field: 'name' });
    await rejectsWith(
      store.alertRules.create(rule({ kind: 'nonsense' as AlertRuleRow['kind'] })),
      'SQL_INVALID_VALUE',
      { field: 'kind' },
    );
    const off = await store.alertRules.update(r.id, {
      enabled: false,
      params: { perMinute: 9 },
      updatedAt: 2_000,
    });
    assert.deepEqual(off, { ...r, enabled: false, params: { perMinute: 9 }, updatedAt: 2_000 });
    const renamed = await store.alertRules.update(r.id, { name: 'renamed', updatedAt: 3_000 });
    assert.equal(renamed?.name, 'renamed');
    assert.equal(renamed?.enabled, false, 'fields not in the patch stay');
    assert.equal(await store.alertRules.update('missing', { updatedAt: 1 }), null);
    for (let i = 0; i < 4; i += 1) await store.alertRules.create(rule({ createdAt: 10 + i }));
    const { pages, items } = await allPages((after) => store.alertRules.list({ limit: 2, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.equal(items[4]?.id, r.id, 'oldest first');
    assert.equal(await store.alertRules.delete(r.id), true);
    assert.equal(await store.alertRules.delete(r.id), false);
    assert.equal(await store.alertRules.get(r.id), null);
  });

  define(
    'alerts: one active per rule and subject, with its deliveries in the same transaction',
    async ({ store }) => {
      const hook = await store.webhooks.create(webhook());
      const a = alert('rule-a');
      const d1 = delivery(hook.id, { alertId: a.id });
      assert.equal(await store.alerts.open(a, [d1]), true);
      assert.deepEqual(await store.alerts.get(a.id), a);
      assert.deepEqual(await store.deliveries.get(d1.id), d1);
      // The same condition again: refused, and its delivery is not written.
      const again = alert('rule-a');
      const d2 = delivery(hook.id, { alertId: again.id });
      assert.equal(await store.alerts.open(again, [d2]), false);
      assert.equal(await store.alerts.get(again.id), null);
      assert.equal(await store.deliveries.get(d2.id), null);
      // Another subject, or another rule on the same subject, is another alert.
      const other = alert('rule-a', { subject: 'agent-2' });
      const ruleB = alert('rule-b');
      assert.equal(await store.alerts.open(other, []), true);
      assert.equal(await store.alerts.open(ruleB, []), true);

      const d3 = delivery(hook.id, { alertId: a.id, eventType: 'agent.lost.resolved' });
      assert.equal(await store.alerts.resolve(a.id, 9_000, [d3]), true);
      assert.equal(await store.alerts.resolve(a.id, 9_500, [delivery(hook.id)]), false, 'resolved once');
      assert.equal(await store.alerts.resolve('missing', 9_500, []), false);
      assert.deepEqual(await store.alerts.get(a.id), { ...a, state: 'resolved', resolvedAt: 9_000 });
      assert.equal((await store.deliveries.get(d3.id))?.eventType, 'agent.lost.resolved');
      // Once resolved, the subject may raise a new alert, and that one is active.
      const next = alert('rule-a', { openedAt: 10_000 });
      assert.equal(await store.alerts.open(next, []), true);
      assert.equal(await store.alerts.open(alert('rule-a', { openedAt: 11_000 }), []), false);

      const active = await store.alerts.list({ states: ['active'] });
      assert.deepEqual(active.items.map((x) => x.id).sort(), [next.id, other.id, ruleB.id].sort());
      const all = await allPages((after) => store.alerts.list({ limit: 2, after }));
      assert.equal(all.items.length, 4);
      assert.equal(all.items[0]?.id, next.id, 'newest first');
      assert.deepEqual(
        (await store.alerts.list({ states: ['resolved'] })).items.map((x) => x.id),
        [a.id],
      );
      assert.deepEqual((await store.alerts.list({ states: [] })).items, []);
    },
  );

  define('alerts: an event is told once per rule and subject', async ({ store }) => {
    assert.equal(
      await store.alerts.open(alert('r', { state: 'event', subject: 'run-1', type: 'run.failed' }), []),
      true,
    );
    assert.equal(
      await store.alerts.open(alert('r', { state: 'event', subject: 'run-1', type: 'run.failed' }), []),
      false,
    );
    assert.equal(
      await store.alerts.open(alert('r', { state: 'event', subject: 'run-2', type: 'run.failed' }), []),
      true,
    );
  });

  define('webhooks: create, update, disable, list, delete with its deliveries', async ({ store }) => {
    const w = await store.webhooks.create(
      webhook({ eventTypes: ['run.failed', 'run.failed', 'agent.lost'] }),
    );
    assert.deepEqual(w.eventTypes, ['run.failed', 'agent.lost']);
    assert.deepEqual(await store.webhooks.get(w.id), w);
    const off = await store.webhooks.update(w.id, {
      enabled: false,
      disabledReason: 'the receiver answered 410',
      updatedAt: 2_000,
    });
    assert.deepEqual(off, {
      ...w,
      enabled: false,
      disabledReason: 'the receiver answered 410',
      updatedAt: 2_000,
    });
    const back = await store.webhooks.update(w.id, {
      enabled: true,
      disabledReason: null,
      url: 'http://127.0.0.1:10/other',
      eventTypes: [],
      description: 'new',
      updatedAt: 3_000,
    });
    assert.deepEqual(back, {
      ...w,
      enabled: true,
      disabledReason: null,
      url: 'http://127.0.0.1:10/other',
      eventTypes: [],
      description: 'new',
      updatedAt: 3_000,
    });
    assert.equal(await store.webhooks.update('missing', { updatedAt: 1 }), null);
    await rejectsWith(store.webhooks.create(webhook({ id: w.id })), 'SQL_CONFLICT', { field: 'id' });
    await store.webhooks.create(webhook({ createdAt: 500 }));
    assert.equal((await store.webhooks.list()).items.length, 2);
    const d = delivery(w.id);
    await store.deliveries.create([d]);
    assert.equal(await store.webhooks.delete(w.id), true);
    assert.equal(await store.webhooks.get(w.id), null);
    assert.equal(await store.deliveries.get(d.id), null, 'its deliveries went with it');
    assert.equal(await store.webhooks.delete(w.id), false);
  });

  define('deliveries: due soonest first, claimed once, recorded, listed newest first', async ({ store }) => {
    const w = await store.webhooks.create(webhook());
    const late = delivery(w.id, { nextAttemptAt: 7_000, createdAt: 1 });
    const soon = delivery(w.id, { nextAttemptAt: 6_000, createdAt: 2 });
    const done = delivery(w.id, { state: 'delivered', nextAttemptAt: null, createdAt: 3, deliveredAt: 3 });
    await store.deliveries.create([late, soon, done]);
    assert.deepEqual(
      (await store.deliveries.due(5_999, 10)).map((d) => d.id),
      [],
    );
    assert.deepEqual(
      (await store.deliveries.due(7_000, 10)).map((d) => d.id),
      [soon.id, late.id],
    );
    assert.deepEqual(
      (await store.deliveries.due(7_000, 1)).map((d) => d.id),
      [soon.id],
    );

    assert.equal(await store.deliveries.claim(soon.id, 6_000, 66_000), true);
    assert.equal(await store.deliveries.claim(soon.id, 6_000, 66_000), false, 'taken once');
    assert.deepEqual(
      (await store.deliveries.due(7_000, 10)).map((d) => d.id),
      [late.id],
    );
    await store.deliveries.record(soon.id, {
      state: 'pending',
      attempts: 1,
      nextAttemptAt: 8_000,
      lastStatus: 500,
      lastError: 'HTTP 500',
      deliveredAt: null,
      updatedAt: 6_100,
    });
    const after = await store.deliveries.get(soon.id);
    assert.deepEqual(after, {
      ...soon,
      attempts: 1,
      nextAttemptAt: 8_000,
      lastStatus: 500,
      lastError: 'HTTP 500',
      updatedAt: 6_100,
    });
    await rejectsWith(
      store.deliveries.record(soon.id, { ...after!, state: 'lost' as DeliveryRow['state'] }),
      'SQL_INVALID_VALUE',
      { field: 'state' },
    );
    const { pages, items } = await allPages((a) =>
      store.deliveries.listByWebhook(w.id, { limit: 2, after: a }),
    );
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 1],
    );
    assert.deepEqual(
      items.map((d) => d.id),
      [done.id, soon.id, late.id],
    );
    assert.deepEqual((await store.deliveries.listByWebhook('other')).items, []);
  });

  define('runs ended since a time, and log counts since a time, for the alert engine', async ({ store }) => {
    const j = await store.jobs.create(job());
    const r1 = await store.runs.create(run(j.id, { state: 'failed', endedAt: 3_000, createdAt: 10 }));
    const r2 = await store.runs.create(run(j.id, { state: 'succeeded', endedAt: 2_000, createdAt: 20 }));
    await store.runs.create(run(j.id, { state: 'running' }));
    await store.runs.create(run(j.id, { state: 'cancelled', endedAt: 500 }));
    assert.deepEqual(
      (await store.runs.endedSince(1_000, 10)).map((r) => r.id),
      [r2.id, r1.id],
    );
    assert.deepEqual(
      (await store.runs.endedSince(1_000, 1)).map((r) => r.id),
      [r2.id],
    );
    await store.logs.append([
      { runId: r1.id, url: 'http://a/', code: 'TIMEOUT', attempts: 1, lastError: 'x', final: false, at: 100 },
      {
        runId: r1.id,
        url: 'http://a/',
        code: 'TIMEOUT',
        attempts: 2,
        lastError: 'x',
        final: false,
        at: 1_100,
      },
      {
        runId: r1.id,
        url: 'http://b/',
        code: 'TIMEOUT',
        attempts: 1,
        lastError: 'x',
        final: false,
        at: 1_200,
      },
      {
        runId: r1.id,
        url: 'http://a/',
        code: 'TIMEOUT',
        attempts: 3,
        lastError: 'x',
        final: true,
        at: 1_300,
      },
      {
        runId: r2.id,
        url: 'http://c/',
        code: 'HTTP_503',
        attempts: 1,
        lastError: 'x',
        final: false,
        at: 1_000,
      },
    ]);
    const counts = (await store.logs.countSince(1_000)).sort((a, b) =>
      `${a.runId}${a.code}${a.final}`.localeCompare(`${b.runId}${b.code}${b.final}`),
    );
    const expected = [
      { runId: r1.id, code: 'TIMEOUT', final: false, count: 2 },
      { runId: r1.id, code: 'TIMEOUT', final: true, count: 1 },
      { runId: r2.id, code: 'HTTP_503', final: false, count: 1 },
    ].sort((a, b) => `${a.runId}${a.code}${a.final}`.localeCompare(`${b.runId}${b.code}${b.final}`));
    assert.deepEqual(counts, expected);
  });
}
