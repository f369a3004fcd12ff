import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import type { ChannelModel } from 'amqplib';
import { defaultConnect } from '../../shared/adapters/frontier/rabbitmq/broker-link.js';
import { openRabbitRunControl } from '../../shared/adapters/run-control/rabbit-run-control.js';
import { silentLogger } from '../../shared/logger.js';
import type { RunCommand, RunControl } from '../../shared/ports/run-control.js';
import { AMQP_URL, cutConnection, rabbitAdmin } from '../helpers/rabbitmq.js';
import { waitFor } from '../helpers/wait-for.js';
import { runControlContract } from './run-control.contract.js';

/** A fanout exchange of its own per test, deleted afterwards with every connection. */
async function rabbitFixture() {
  const exchange = `test-run-control-${randomUUID()}`;
  const opened: { control: RunControl; model: () => ChannelModel | null }[] = [];
  return {
    exchange,
    opened,
    open: async () => {
      let model: ChannelModel | null = null;
      const control = await openRabbitRunControl({
        url: AMQP_URL,
        exchange,
        logger: silentLogger(),
        initialBackoffMs: 50,
        maxBackoffMs: 200,
        connect: async (url) => (model = await defaultConnect(url)),
      });
      opened.push({ control, model: () => model });
      return control;
    },
    cleanup: async () => {
      for (const o of opened) await o.control.close();
      const admin = await rabbitAdmin();
      await admin.channel.deleteExchange(exchange);
      await admin.deleteQueuesAndClose([]);
    },
  };
}

runControlContract('rabbitmq fanout', rabbitFixture);

it('rabbitmq: a durable fanout exchange, and each subscriber an exclusive server-named queue', async () => {
  const fixture = await rabbitFixture();
  const admin = await rabbitAdmin();
  try {
    const control = await fixture.open();
    await control.subscribe(() => undefined);
    // checkExchange fails when it is missing; a passive redeclare with other flags would too.
    await admin.channel.checkExchange(fixture.exchange);
    await assert.rejects(
      (async () => {
        const probe = await rabbitAdmin();
        try {
          await probe.channel.assertExchange(fixture.exchange, 'fanout', { durable: false });
        } finally {
          await probe.deleteQueuesAndClose([]).catch(() => undefined);
        }
      })(),
      /PRECONDITION_FAILED/,
      'the exchange is durable',
    );
  } finally {
    await admin.deleteQueuesAndClose([]).catch(() => undefined);
    await fixture.cleanup();
  }
});

it('rabbitmq: after a cut connection the subscriber reconnects and gets later commands', async () => {
  const fixture = await rabbitFixture();
  try {
    const publisher = await fixture.open();
    const subscriber = await fixture.open();
    const seen: RunCommand[] = [];
    await subscriber.subscribe((c) => void seen.push(c));
    await publisher.publish({ type: 'pause', runId: 'r1' });
    await waitFor(() => seen.length === 1, { message: 'the first command' });
    const model = fixture.opened[1]?.model();
    assert.ok(model);
    cutConnection(model);
    // Commands sent while it is away may be missed (SQL is the truth); later ones arrive.
    await waitFor(
      async () => {
        await publisher.publish({ type: 'resume', runId: 'r1' });
        return seen.some((c) => c.type === 'resume');
      },
      { timeoutMs: 10_000, intervalMs: 100, message: 'a command after the reconnect' },
    );
    assert.equal(fixture.opened[1]?.model() !== model, true, 'a new connection');
  } finally {
    await fixture.cleanup();
  }
});

it('rabbitmq: a message that is not a command is dropped, and the next one arrives', async () => {
  const fixture = await rabbitFixture();
  const admin = await rabbitAdmin();
  try {
    const control = await fixture.open();
    const seen: RunCommand[] = [];
    await control.subscribe((c) => void seen.push(c));
    admin.channel.publish(fixture.exchange, '', Buffer.from('not json'));
    admin.channel.publish(
      fixture.exchange,
      '',
      Buffer.from(JSON.stringify({ type: 'explode', runId: 'r1' })),
    );
    await control.publish({ type: 'cancel', runId: 'r1' });
    await waitFor(() => seen.length >= 1, { message: 'the valid command' });
    assert.deepEqual(seen, [{ type: 'cancel', runId: 'r1' }]);
  } finally {
    await admin.deleteQueuesAndClose([]).catch(() => undefined);
    await fixture.cleanup();
  }
});

it('rabbitmq: no broker at the URL fails RUN_CONTROL_UNAVAILABLE', async () => {
  await assert.rejects(
    openRabbitRunControl({ url: 'amqp://guest:guest@127.0.0.1:1', logger: silentLogger() }),
    { code: 'RUN_CONTROL_UNAVAILABLE' },
  );
});
