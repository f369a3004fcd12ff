import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel } from 'amqplib';
import { describe, it } from 'node:test';
import { startTestMaster } from '../helpers/master-api.js';
import { AMQP_URL, rabbitAdmin } from '../helpers/rabbitmq.js';

describe('dlq.growing over a real RabbitMQ dead-letter queue', () => {
  it('reads <prefix>.failed passively, alerts while it grows, resolves when it stops', async () => {
    const prefix = `test-alerts-${randomUUID()}`;
    const queue = `${prefix}.failed`;
    const admin = await rabbitAdmin();
    await admin.channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    // RabbitMQ is unreachable at the first try (as when the master starts before it), then back.
    const connections: ChannelModel[] = [];
    let attempts = 0;
    const connectAgain = async (): Promise<ChannelModel> => {
      attempts += 1;
      if (attempts === 1) throw new Error('connect ECONNREFUSED 127.0.0.1:5672');
      const made = await connect(AMQP_URL, { timeout: 5_000 });
      connections.push(made);
      return made;
    };
    const master = await startTestMaster({
      alerting: { amqp: { connect: connectAgain, queuePrefix: prefix } },
    });
    try {
      const made = await master.call('POST', '/api/v1/alert-rules', {
        body: { name: 'dlq', kind: 'dlq.growing', params: { windowMs: 60_000, minIncrease: 2 } },
      });
      assert.equal(made.status, 201, made.text);
      const status = async () =>
        (await master.call('GET', `/api/v1/alert-rules/${made.json.id}`)).json.status;
      await master.alerting.evaluateNow();
      assert.equal((await status()).available, false, 'no RabbitMQ yet: it cannot tell');
      assert.match((await status()).reason, /ECONNREFUSED/);
      await master.alerting.evaluateNow();
      assert.deepEqual([(await status()).available, (await status()).reason], [true, null]);
      // The connection is lost (a broker restart): the next evaluation connects again.
      await connections[0]?.close();
      await master.alerting.evaluateNow();
      await master.alerting.evaluateNow();
      assert.equal((await status()).available, true, 'connected again');
      assert.equal(connections.length, 2);

      const publish = async (n: number, total: number): Promise<void> => {
        for (let i = 0; i < n; i += 1) admin.channel.sendToQueue(queue, Buffer.from(`dead ${i}`));
        // Published on a plain channel: wait until the broker counts them.
        for (let tries = 0; tries < 200; tries += 1) {
          if ((await admin.channel.checkQueue(queue)).messageCount >= total) return;
          await new Promise((r) => setTimeout(r, 25));
        }
        throw new Error('the broker did not count the messages');
      };
      await publish(1, 1);
      master.clock.advance(5_000);
      await master.alerting.evaluateNow();
      assert.equal(
        (await master.call('GET', '/api/v1/alerts?state=active')).json.items.length,
        0,
        'one is not two',
      );
      await publish(2, 3);
      master.clock.advance(5_000);
      await master.alerting.evaluateNow();
      const active = (await master.call('GET', '/api/v1/alerts?state=active')).json.items;
      assert.equal(active.length, 1);
      assert.equal(active[0].type, 'dlq.growing');
      assert.equal(active[0].subject, queue);
      assert.equal(active[0].data.depth, 3);
      assert.equal(active[0].data.increase, 3);

      // No growth for a whole window: resolved.
      master.clock.advance(61_000);
      await master.alerting.evaluateNow();
      master.clock.advance(5_000);
      await master.alerting.evaluateNow();
      assert.equal((await master.call('GET', '/api/v1/alerts?state=active')).json.items.length, 0);
      assert.equal((await master.call('GET', `/api/v1/alerts/${active[0].id}`)).json.state, 'resolved');
    } finally {
      await master.close();
      await admin.deleteQueuesAndClose([queue]);
    }
  });
});
