import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerLink, defaultConnect } from '../../shared/adapters/frontier/rabbitmq/broker-link.js';
import { AppError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import { freePort } from '../helpers/ports.js';
import { AMQP_URL, cutConnection } from '../helpers/rabbitmq.js';
import { waitFor } from '../helpers/wait-for.js';

/** A URL of a node that is down: a loopback port nobody listens on. */
async function deadNode(): Promise<string> {
  const url = new URL(AMQP_URL);
  url.port = String(await freePort());
  return url.toString();
}

describe('the broker link over the URLs of a cluster (real RabbitMQ, one node down)', () => {
  it('connects past a dead node, and after a lost link tries the next node first', async () => {
    const dead = await deadNode();
    const tried: string[] = [];
    let setups = 0;
    const link = new BrokerLink({
      url: [dead, AMQP_URL],
      connect: (url) => {
        tried.push(url);
        return defaultConnect(url);
      },
      logger: silentLogger(),
      initialBackoffMs: 20,
      maxBackoffMs: 100,
      setup: async () => {
        setups += 1;
      },
      onDown: () => undefined,
    });
    try {
      await link.start();
      assert.deepEqual(tried, [dead, AMQP_URL], 'the dead node first, then the live one');
      assert.equal(link.broker, `amqp://${new URL(AMQP_URL).host}`);
      const first = link.require('test');

      tried.length = 0;
      cutConnection(first.model);
      await waitFor(() => link.current !== null && link.current !== first, {
        timeoutMs: 15_000,
        message: 'the link back after the cut',
      });
      // Round robin: the lost node's successor (the dead one) first, then round to the live one.
      assert.deepEqual(tried, [dead, AMQP_URL]);
      assert.equal(setups, 2, 'setup ran on the new link');
    } finally {
      await link.close();
    }
  });

  it('start rejects with FRONTIER_UNAVAILABLE once every node was tried', async () => {
    const urls = [await deadNode(), await deadNode()];
    const tried: string[] = [];
    const link = new BrokerLink({
      url: urls,
      connect: (url) => {
        tried.push(url);
        return defaultConnect(url);
      },
      logger: silentLogger(),
      setup: async () => undefined,
      onDown: () => undefined,
    });
    await assert.rejects(
      link.start(),
      (err: unknown) => err instanceof AppError && err.code === 'FRONTIER_UNAVAILABLE',
    );
    assert.deepEqual(tried, urls);
    await link.close();
  });
});
