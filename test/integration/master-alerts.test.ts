import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import type { CrashLoop, LostAgent } from '../../master/alerts/facts.js';
import { assertError, jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Webhook tests sign with the test clock, and the receiver checks timestamps against real time. */
const realStart = (): number => Date.now();

async function addWebhook(master: TestMaster, receiver: Receiver, extra: Record<string, unknown> = {}) {
  const made = await master.call('POST', '/api/v1/webhooks', { body: { url: receiver.url, ...extra } });
  assert.equal(made.status, 201, made.text);
  assert.match(made.json.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  receiver.secret = made.json.secret;
  return made.json as { id: string; secret: string };
}

async function addRule(master: TestMaster, kind: string, params: Record<string, unknown> = {}) {
  const made = await master.call('POST', '/api/v1/alert-rules', {
    body: { name: `${kind} ${Math.random()}`, kind, params },
  });
  assert.equal(made.status, 201, made.text);
  return made.json as { id: string };
}

async function deliveries(master: TestMaster, webhookId: string) {
  const page = await master.call('GET', `/api/v1/webhooks/${webhookId}/deliveries`);
  assert.equal(page.status, 200, page.text);
  return page.json.items as {
    id: string;
    state: string;
    attempts: number;
    lastStatus: number | null;
    lastError: string | null;
    nextAttemptAt: string | null;
    eventType: string;
  }[];
}

describe('alerts and Standard Webhooks, through the master API', () => {
  let master: TestMaster;
  let receiver: Receiver;
  let lost: LostAgent[] = [];
  let loops: CrashLoop[] = [];

  beforeEach(async () => {
    lost = [];
    loops = [];
    receiver = await startReceiver();
    master = await startTestMaster({
      startAt: realStart(),
      alerting: {
        lostAgents: async () => lost,
        crashLoops: async () => loops,
        random: () => 0.5,
      },
    });
  });
  afterEach(async () => {
    await master.close();
    await receiver.close();
  });
  after(() => undefined);

  it('a run that fails (a real state change) is sent as run.failed, signed, verified by standardwebhooks, once', async () => {
    const hook = await addWebhook(master, receiver);
    await addRule(master, 'run.failed');
    await addRule(master, 'run.succeeded');
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody() });
    const run = await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`);
    assert.equal(run.status, 201, run.text);
    const runId = run.json.id as string;
    await master.alerting.evaluateNow();
    assert.equal(await master.alerting.deliverNow(), 0, 'nothing ended yet');

    // What a scheduler's run sync does (scheduler/runs/run-sync.ts): claim it, then record its end.
    const t = master.clock.now();
    assert.ok(
      await master.store.runs.transition(runId, ['queued'], 'running', {
        startedAt: t,
        schedulerId: 's1',
        heartbeatAt: t,
      }),
    );
    master.clock.advance(1_000);
    assert.ok(
      await master.store.runs.transition(runId, ['running'], 'failed', {
        endedAt: master.clock.now(),
        error: 'every seed failed',
      }),
    );

    await master.alerting.evaluateNow();
    await master.alerting.evaluateNow();
    assert.equal(await master.alerting.deliverNow(), 1);
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0]!;
    assert.equal(got.verifyError, null);
    assert.equal(got.verified?.type, 'run.failed');
    assert.equal(got.verified?.data.runId, runId);
    assert.equal(got.verified?.data.error, 'every seed failed');
    assert.equal(got.verified?.data.state, 'event');
    assert.match(String(got.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.equal(got.headers['content-type'], 'application/json');

    // A tampered body does not verify: the receiver's check is real.
    const { Webhook } = await import('standardwebhooks');
    assert.throws(() =>
      new Webhook(hook.secret).verify(got.body.replace('failed', 'passed'), {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      }),
    );

    const events = await master.call('GET', '/api/v1/alerts?state=event');
    assert.deepEqual(
      events.json.items.map((a: { type: string; subject: string }) => [a.type, a.subject]),
      [['run.failed', runId]],
    );
    const [d] = await deliveries(master, hook.id);
    assert.equal(d?.state, 'delivered');
    assert.equal(d?.lastStatus, 200);
  });

  it('a run that succeeds is run.succeeded; one cancelled through the API is run.cancelled', async () => {
    await addWebhook(master, receiver, { eventTypes: ['run.succeeded', 'run.cancelled'] });
    for (const kind of ['run.succeeded', 'run.cancelled', 'run.failed']) await addRule(master, kind);
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody() });
    const ok = (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id as string;
    const stop = (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id as string;
    master.clock.advance(10);
    await master.store.runs.transition(ok, ['queued'], 'running', { startedAt: master.clock.now() });
    await master.store.runs.transition(ok, ['running'], 'succeeded', { endedAt: master.clock.now() });
    assert.equal((await master.call('POST', `/api/v1/runs/${stop}/cancel`)).status, 200);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    const seen = receiver.received.map((r) => [r.verified?.type, r.verified?.data.runId]).sort();
    assert.deepEqual(
      seen,
      [
        ['run.cancelled', stop],
        ['run.succeeded', ok],
      ].sort(),
    );
  });

  it('a run whose end was committed late (its end time behind what was looked at) is still told, once', async () => {
    await addWebhook(master, receiver, { eventTypes: ['run.succeeded'] });
    await addRule(master, 'run.succeeded');
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody() });
    const runIds = [0, 1].map(
      async () => (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id as string,
    );
    const [first, late] = await Promise.all(runIds);
    master.clock.advance(30_000);
    const end = async (id: string, endedAt: number) => {
      await master.store.runs.transition(id, ['queued'], 'running', { startedAt: endedAt - 1 });
      await master.store.runs.transition(id, ['running'], 'succeeded', { endedAt });
    };
    await end(first!, master.clock.now());
    await master.alerting.evaluateNow();
    // Another master's transaction lands now, with an end time 20 s before the one already seen.
    await end(late!, master.clock.now() - 20_000);
    master.clock.advance(5_000);
    await master.alerting.evaluateNow();
    master.clock.advance(5_000);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    const told = receiver.received.map((r) => r.verified?.data.runId).sort();
    assert.deepEqual(told, [first, late].sort());
  });

  it('one alert while an agent stays lost, and agent.lost.resolved when it is back', async () => {
    const hook = await addWebhook(master, receiver);
    const rule = await addRule(master, 'agent.lost');
    lost = [{ agentId: 'agent-7', host: 'crawl-7', lastSeenAt: master.clock.now() - 25_000 }];
    for (let i = 0; i < 3; i += 1) {
      await master.alerting.evaluateNow();
      master.clock.advance(5_000);
    }
    const active = await master.call('GET', '/api/v1/alerts?state=active');
    assert.equal(active.json.items.length, 1);
    assert.equal(active.json.items[0].subject, 'agent-7');
    assert.equal(active.json.items[0].type, 'agent.lost');
    await master.alerting.deliverNow();
    assert.deepEqual(
      receiver.received.map((r) => r.verified?.type),
      ['agent.lost'],
    );
    assert.equal(receiver.received[0]?.verified?.data.host, 'crawl-7');

    lost = [];
    await master.alerting.evaluateNow();
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(
      receiver.received.map((r) => r.verified?.type),
      ['agent.lost', 'agent.lost.resolved'],
    );
    assert.ok(receiver.received.every((r) => r.verifyError === null));
    const resolved = receiver.received[1]?.verified?.data;
    assert.equal(resolved?.alertId, active.json.items[0].id);
    assert.equal(resolved?.state, 'resolved');
    assert.equal((await master.call('GET', '/api/v1/alerts?state=active')).json.items.length, 0);
    const past = await master.call('GET', `/api/v1/alerts/${active.json.items[0].id}`);
    assert.equal(past.json.state, 'resolved');
    assert.equal(past.json.ruleId, rule.id);

    // Lost again: a new alert, not the old one reopened.
    lost = [{ agentId: 'agent-7', host: 'crawl-7', lastSeenAt: null }];
    await master.alerting.evaluateNow();
    const again = await master.call('GET', '/api/v1/alerts?state=active');
    assert.equal(again.json.items.length, 1);
    assert.notEqual(again.json.items[0].id, active.json.items[0].id);
    assert.equal((await deliveries(master, hook.id)).length, 3);
  });

  it('a crash loop is process.crash_loop on agent/process, resolved when it stops', async () => {
    await addWebhook(master, receiver, { eventTypes: ['process.crash_loop'] });
    await addRule(master, 'process.crash_loop');
    loops = [{ agentId: 'a1', processId: 'p3', restarts: 5, since: master.clock.now() }];
    await master.alerting.evaluateNow();
    await master.alerting.evaluateNow();
    master.clock.advance(1_000);
    loops = [];
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(
      receiver.received.map((r) => [r.verified?.type, r.verified?.data.subject]),
      [
        ['process.crash_loop', 'a1/p3'],
        ['process.crash_loop.resolved', 'a1/p3'],
      ],
    );
  });

  it('an error rate over the threshold for the window alerts per run, and resolves when it falls', async () => {
    await addWebhook(master, receiver);
    await addRule(master, 'errors.rate', { perMinute: 2, windowMs: 60_000 });
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody() });
    const runId = (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id as string;
    const at = master.clock.now();
    const row = (n: number, final: boolean) => ({
      runId,
      url: `http://a.test/${n}`,
      code: 'TIMEOUT',
      attempts: 1,
      lastError: 'slow',
      final,
      at,
    });
    await master.store.logs.append([row(1, false), row(2, false)]);
    await master.alerting.evaluateNow();
    assert.equal(
      (await master.call('GET', '/api/v1/alerts?state=active')).json.items.length,
      0,
      '2 a minute is not over 2',
    );
    await master.store.logs.append([row(3, true)]);
    await master.alerting.evaluateNow();
    const active = (await master.call('GET', '/api/v1/alerts?state=active')).json.items;
    assert.equal(active.length, 1);
    assert.equal(active[0].type, 'errors.rate');
    assert.equal(active[0].data.failures, 3);
    master.clock.advance(61_000);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(
      receiver.received.map((r) => r.verified?.type),
      ['errors.rate', 'errors.rate.resolved'],
    );
  });

  it('a run with queued work and no progress for N minutes is run.stuck, resolved when it moves', async () => {
    await addWebhook(master, receiver);
    await addRule(master, 'run.stuck', { minutes: 2 });
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody() });
    const runId = (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id as string;
    await master.store.runs.transition(runId, ['queued'], 'running', { startedAt: master.clock.now() });
    const report = (done: number) =>
      master.store.runs.report([
        {
          id: runId,
          schedulerId: 's1',
          counters: { done, failed: 0, queued: 4, inFlight: 1, pagesPerSecond: 0, notModified: 0 },
          at: master.clock.now(),
        },
      ]);
    await report(10);
    await master.alerting.evaluateNow();
    master.clock.advance(60_000);
    await master.alerting.evaluateNow();
    assert.equal(
      (await master.call('GET', '/api/v1/alerts?state=active')).json.items.length,
      0,
      'one minute is not stuck',
    );
    master.clock.advance(61_000);
    await master.alerting.evaluateNow();
    const active = (await master.call('GET', '/api/v1/alerts?state=active')).json.items;
    assert.deepEqual(
      active.map((a: { type: string; subject: string }) => [a.type, a.subject]),
      [['run.stuck', runId]],
    );
    master.clock.advance(1_000);
    await report(11);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(
      receiver.received.map((r) => r.verified?.type),
      ['run.stuck', 'run.stuck.resolved'],
    );
  });

  it('without RabbitMQ the dlq.growing rule says it cannot tell, and raises nothing', async () => {
    const rule = await addRule(master, 'dlq.growing');
    await master.alerting.evaluateNow();
    const seen = await master.call('GET', `/api/v1/alert-rules/${rule.id}`);
    assert.equal(seen.json.status.available, false);
    assert.match(seen.json.status.reason, /RabbitMQ|dead-letter/);
    assert.equal((await master.call('GET', '/api/v1/alerts')).json.items.length, 0);
  });

  it('retried after a 500 with the same webhook-id, then delivered', async () => {
    const hook = await addWebhook(master, receiver);
    await addRule(master, 'agent.lost');
    lost = [{ agentId: 'x', host: null, lastSeenAt: null }];
    await master.alerting.evaluateNow();
    receiver.answers = [{ status: 500 }];
    assert.equal(await master.alerting.deliverNow(), 1);
    let [d] = await deliveries(master, hook.id);
    assert.equal(d?.state, 'pending');
    assert.equal(d?.attempts, 1);
    assert.equal(d?.lastStatus, 500);
    assert.equal(d?.lastError, 'HTTP 500');
    // Base 1 s, equal jitter with random() = 0.5: 750 ms.
    assert.equal(Date.parse(d!.nextAttemptAt!), master.clock.now() + 750);
    assert.equal(await master.alerting.deliverNow(), 0, 'not due yet');
    master.clock.advance(750);
    assert.equal(await master.alerting.deliverNow(), 1);
    [d] = await deliveries(master, hook.id);
    assert.equal(d?.state, 'delivered');
    assert.equal(d?.attempts, 2);
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[0]?.headers['webhook-id'], receiver.received[1]?.headers['webhook-id']);
    assert.ok(receiver.received.every((r) => r.verifyError === null));
  });

  it('honours Retry-After', async () => {
    const hook = await addWebhook(master, receiver);
    receiver.answers = [{ status: 503, headers: { 'retry-after': '120' } }];
    const tested = await master.call('POST', `/api/v1/webhooks/${hook.id}/test`);
    assert.equal(tested.status, 200, tested.text);
    assert.equal(tested.json.state, 'pending');
    assert.equal(tested.json.lastStatus, 503);
    assert.equal(Date.parse(tested.json.nextAttemptAt), master.clock.now() + 120_000);
    master.clock.advance(119_000);
    assert.equal(await master.alerting.deliverNow(), 0);
    master.clock.advance(1_000);
    assert.equal(await master.alerting.deliverNow(), 1);
    assert.equal(receiver.received.length, 2);
    assert.equal((await deliveries(master, hook.id))[0]?.state, 'delivered');
  });

  it('a 410 disables the endpoint; what was pending for it is cancelled, not sent', async () => {
    const hook = await addWebhook(master, receiver);
    await addRule(master, 'agent.lost');
    lost = [
      { agentId: 'a', host: null, lastSeenAt: null },
      { agentId: 'b', host: null, lastSeenAt: null },
    ];
    await master.alerting.evaluateNow();
    receiver.answers = [{ status: 410 }];
    await master.alerting.deliverNow();
    assert.equal(receiver.received.length, 1);
    const endpoint = await master.call('GET', `/api/v1/webhooks/${hook.id}`);
    assert.equal(endpoint.json.enabled, false);
    assert.match(endpoint.json.disabledReason, /410/);
    const states = (await deliveries(master, hook.id)).map((d) => d.state).sort();
    assert.deepEqual(states, ['cancelled', 'failed']);
    // Enabled again by a person: it receives again (and the 410 is forgotten).
    const on = await master.call('PATCH', `/api/v1/webhooks/${hook.id}`, { body: { enabled: true } });
    assert.equal(on.json.disabledReason, null);
    const t = await master.call('POST', `/api/v1/webhooks/${hook.id}/test`);
    assert.equal(t.json.state, 'delivered');
    assert.equal(receiver.received.at(-1)?.verified?.type, 'webhook.test');
  });

  it('a pending delivery survives a master restart and is sent by the next one', async () => {
    const hook = await addWebhook(master, receiver);
    await addRule(master, 'agent.lost');
    lost = [{ agentId: 'r', host: null, lastSeenAt: null }];
    await master.alerting.evaluateNow();
    receiver.answers = [{ status: 502 }];
    await master.alerting.deliverNow();
    await master.restart();
    master.clock.advance(60_000);
    assert.equal(await master.alerting.deliverNow(), 1);
    const [d] = await deliveries(master, hook.id);
    assert.equal(d?.state, 'delivered');
    assert.equal(d?.attempts, 2);
  });

  it('the API: scopes, validation, the secret shown once, CRUD', async () => {
    const bad = await master.call('POST', '/api/v1/alert-rules', {
      body: { name: 'r', kind: 'errors.rate', params: { perMinute: -1, extra: 1 } },
    });
    assertError(bad, 400, 'INVALID_REQUEST');
    assert.deepEqual(bad.json.error.problems.map((p: { field: string }) => p.field).sort(), [
      'params.extra',
      'params.perMinute',
    ]);
    assertError(
      await master.call('POST', '/api/v1/alert-rules', { body: { name: 'r', kind: 'nope' } }),
      400,
      'INVALID_REQUEST',
    );
    const rule = await addRule(master, 'run.stuck');
    assert.equal(
      (await master.call('GET', `/api/v1/alert-rules/${rule.id}`)).json.params.minutes,
      10,
      'defaults filled in',
    );
    const patched = await master.call('PATCH', `/api/v1/alert-rules/${rule.id}`, {
      body: { enabled: false, params: { minutes: 3 } },
    });
    assert.equal(patched.json.enabled, false);
    assert.equal(patched.json.params.minutes, 3);
    assertError(await master.call('GET', '/api/v1/alert-rules/missing'), 404, 'ALERT_RULE_NOT_FOUND');

    const hook = await addWebhook(master, receiver, { eventTypes: ['agent.lost'] });
    const listed = await master.call('GET', '/api/v1/webhooks');
    assert.equal(listed.json.items.length, 1);
    assert.equal(listed.json.items[0].secret, undefined, 'the secret is shown at creation only');
    assert.ok(!listed.text.includes(hook.secret));
    assertError(
      await master.call('POST', '/api/v1/webhooks', {
        body: { url: receiver.url, eventTypes: ['Not A Type'] },
      }),
      400,
      'INVALID_REQUEST',
    );
    assertError(
      await master.call('POST', '/api/v1/webhooks', { body: { url: 'ftp://127.0.0.1/x' } }),
      400,
      'WEBHOOK_URL_REFUSED',
    );

    const reader = await master.call('POST', '/api/v1/tokens', {
      body: { name: 'reader', scopes: ['read'] },
    });
    const operator = await master.call('POST', '/api/v1/tokens', {
      body: { name: 'op', scopes: ['operate'] },
    });
    // A reader sees where endpoints are, not their paths: chat hook URLs carry a secret there.
    const seen = await master.call('GET', '/api/v1/webhooks', { token: reader.json.secret });
    assert.equal(seen.status, 200);
    assert.ok(seen.json.items.length > 0);
    for (const w of seen.json.items as { id: string; url: string }[]) {
      assert.match(w.url, /^http:\/\/127\.0\.0\.1:\d+\/…$/);
      const one = await master.call('GET', `/api/v1/webhooks/${w.id}`, { token: reader.json.secret });
      assert.equal(one.json.url, w.url);
      const full = await master.call('GET', `/api/v1/webhooks/${w.id}`);
      assert.match(full.json.url, /\/hook$/, 'an admin sees the whole URL');
    }
    assert.equal((await master.call('GET', '/api/v1/alerts', { token: reader.json.secret })).status, 200);
    assertError(
      await master.call('POST', '/api/v1/alert-rules', {
        token: reader.json.secret,
        body: { name: 'x', kind: 'run.failed' },
      }),
      403,
      'FORBIDDEN',
    );
    assert.equal(
      (
        await master.call('POST', '/api/v1/alert-rules', {
          token: operator.json.secret,
          body: { name: 'x', kind: 'run.failed' },
        })
      ).status,
      201,
    );
    assertError(
      await master.call('POST', '/api/v1/webhooks', {
        token: operator.json.secret,
        body: { url: receiver.url },
      }),
      403,
      'FORBIDDEN',
    );
    assertError(
      await master.call('POST', `/api/v1/webhooks/${hook.id}/test`, { token: operator.json.secret }),
      403,
      'FORBIDDEN',
    );
    assertError(await master.call('GET', '/api/v1/alerts', { token: null }), 401, 'UNAUTHORIZED');

    assert.equal((await master.call('DELETE', `/api/v1/webhooks/${hook.id}`)).status, 204);
    assertError(await master.call('GET', `/api/v1/webhooks/${hook.id}/deliveries`), 404, 'WEBHOOK_NOT_FOUND');
    assert.equal((await master.call('DELETE', `/api/v1/alert-rules/${rule.id}`)).status, 204);
    assertError(await master.call('DELETE', `/api/v1/alert-rules/${rule.id}`), 404, 'ALERT_RULE_NOT_FOUND');
  });
});

describe("the webhook address guard (the crawler's, shared/net/address-guard.ts)", () => {
  it('refuses private URLs when saved, and a private address when connecting', async () => {
    const receiver = await startReceiver();
    const master = await startTestMaster({ startAt: Date.now(), alerting: { allowPrivate: false } });
    try {
      for (const url of [
        receiver.url,
        'http://localhost:9/x',
        'http://[::1]:9/x',
        'http://10.1.2.3/x',
        'http://169.254.169.254/latest',
      ]) {
        assertError(
          await master.call('POST', '/api/v1/webhooks', { body: { url } }),
          400,
          'WEBHOOK_URL_REFUSED',
        );
      }
      // A row that names a private address anyway (saved while allowed, say) is refused at connect.
      const now = master.clock.now();
      await master.store.webhooks.create({
        id: 'private-one',
        url: receiver.url,
        description: '',
        secret: 'whsec_' + Buffer.from('0123456789abcdef01234567').toString('base64'),
        eventTypes: [],
        enabled: true,
        disabledReason: null,
        createdAt: now,
        updatedAt: now,
      });
      const t = await master.call('POST', '/api/v1/webhooks/private-one/test');
      assert.equal(t.status, 200, t.text);
      assert.equal(t.json.state, 'pending');
      assert.equal(t.json.lastStatus, null);
      assert.match(t.json.lastError, /not allowed|private/i);
      assert.equal(receiver.received.length, 0, 'nothing reached the private address');
    } finally {
      await master.close();
      await receiver.close();
    }
  });
});
