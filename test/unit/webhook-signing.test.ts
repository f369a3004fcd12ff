import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { backoffMs, MAX_RETRY_AFTER_MS, retryAfterMs } from '../../master/webhooks/retry-schedule.js';
import {
  generateWebhookSecret,
  newMessageId,
  sign,
  webhookHeaders,
} from '../../master/webhooks/signature.js';
import { webhookUrlProblem } from '../../master/webhooks/url-check.js';

describe('Standard Webhooks signing', () => {
  it('signs as the standardwebhooks package does, and its verify accepts it', () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    const id = newMessageId();
    const body = JSON.stringify({
      type: 'run.failed',
      timestamp: new Date().toISOString(),
      data: { runId: 'r' },
    });
    const now = Date.now();
    const headers = webhookHeaders(secret, id, now, body);
    const reference = new Webhook(secret).sign(id, new Date(Math.floor(now / 1000) * 1000), body);
    assert.equal(headers['webhook-signature'], reference);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers), /signature/i);
  });

  it('signs id.timestamp.body with the bytes after whsec_ (the spec example)', () => {
    // From the Standard Webhooks reference implementations' tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const body = '{"test": 2432232314}';
    assert.equal(sign(secret, id, 1614265330, body), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('the retry schedule', () => {
  const schedule = { baseMs: 1_000, maxMs: 60_000, maxAttempts: 5 };
  it('doubles from the base with equal jitter, capped', () => {
    assert.equal(
      backoffMs(schedule, 1, () => 0),
      500,
    );
    assert.equal(
      backoffMs(schedule, 1, () => 1),
      1_000,
    );
    assert.equal(
      backoffMs(schedule, 3, () => 0.5),
      3_000,
    );
    assert.equal(
      backoffMs(schedule, 20, () => 1),
      60_000,
    );
    const spread = new Set(Array.from({ length: 20 }, () => backoffMs(schedule, 4)));
    assert.ok(spread.size > 1, 'jittered');
  });
  it('reads Retry-After as seconds or an HTTP date, capped at a day', () => {
    const now = Date.UTC(2026, 0, 1);
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(new Date(now + 30_000).toUTCString(), now), 30_000);
    assert.equal(retryAfterMs(new Date(now - 30_000).toUTCString(), now), 0);
    assert.equal(retryAfterMs('999999999', now), MAX_RETRY_AFTER_MS);
    assert.equal(retryAfterMs('soon', now), null);
    assert.equal(retryAfterMs(undefined, now), null);
  });
});

describe('webhook URLs', () => {
  it('only http(s) without credentials; private addresses only when allowed', () => {
    assert.equal(webhookUrlProblem('https://hooks.example.com/x', false), null);
    assert.match(String(webhookUrlProblem('ftp://hooks.example.com/x', false)), /http/);
    assert.match(String(webhookUrlProblem('https://u:p@hooks.example.com/x', false)), /credentials/);
    assert.match(String(webhookUrlProblem('not a url', false)), /not a URL/);
    for (const url of [
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://192.168.1.2/',
      'http://localhost:8/',
      'http://0.0.0.0/',
    ]) {
      assert.notEqual(webhookUrlProblem(url, false), null, url);
      assert.equal(webhookUrlProblem(url, true), null, url);
    }
    assert.equal(webhookUrlProblem('http://8.8.8.8/', false), null);
  });
});
