import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from '../../shared/protocol/task.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeRabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { waitFor } from '../helpers/wait-for.js';
import { ref, tasks } from '../contract/frontier-contract-kit.js';

describe('rabbitmq frontier: no head-of-line blocking in the prefetch window', () => {
  it('sets aside a waiting host so another host behind it in the queue still flows, and loses nothing', async () => {
    const clock = new FakeClock();
    const fx = await makeRabbitFixture(clock, { prefetch: 20 });
    try {
      const { frontier } = fx;
      // The slow host's 60 tasks are ahead of the fast host's in the queue: a window of 20 holds
      // only slow ones, which the scheduler cannot use yet.
      await frontier.push(tasks('https://slow.test/', 60));
      await frontier.push(tasks('https://fast.test/', 10));
      const waitingHost = { excludeHosts: ['slow.test'], hostWaitMs: () => 5_000 };

      const fast: Lease[] = [];
      await waitFor(
        async () => {
          const got = await frontier.lease(10, waitingHost);
          assert.ok(
            got.every((l) => l.host === 'fast.test'),
            'an excluded host is never handed out',
          );
          fast.push(...got);
          if (got.length > 0)
            await frontier.settle({ acks: got.map((l) => ({ lease: ref(l) })), retries: [], failures: [] });
          return fast.length === 10;
        },
        { timeoutMs: 15_000, message: 'the fast host to get through a window full of the slow one' },
      );
      assert.ok(frontier.setAsideCount >= 20, `set aside ${frontier.setAsideCount}`);
      const during = await frontier.stats();
      assert.equal(during.total, 70);
      assert.equal(during.done, 10);

      // Nothing lost, nothing counted as an attempt: once the host may go, every slow task comes back.
      clock.advance(10_000);
      const slow = new Map<string, Lease>();
      await waitFor(
        async () => {
          const got = await frontier.lease(20);
          for (const l of got) {
            assert.ok(!slow.has(l.url), `${l.url} handed out twice`);
            assert.equal(l.attempt, 1, 'setting aside is not an attempt');
            slow.set(l.url, l);
          }
          if (got.length > 0)
            await frontier.settle({ acks: got.map((l) => ({ lease: ref(l) })), retries: [], failures: [] });
          return slow.size === 60;
        },
        { timeoutMs: 20_000, message: 'every slow task back after the wait' },
      );
      const after = await frontier.stats();
      assert.equal(after.done, 70);
      assert.equal(after.ready + after.delayed + after.leased, 0);
    } finally {
      await fx.cleanup();
    }
  });
});
