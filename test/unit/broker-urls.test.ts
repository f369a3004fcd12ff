import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  brokerUrlList,
  describeUrl,
  UrlRotation,
} from '../../shared/adapters/frontier/rabbitmq/broker-urls.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { masterConfigSchema } from '../../master/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { AppError, ConfigError } from '../../shared/errors.js';

const A = 'amqp://u:secret@10.0.0.1:5672';
const B = 'amqp://u:secret@10.0.0.2:5672';
const C = 'amqps://u:secret@10.0.0.3:5671/vh';

describe('the RabbitMQ URLs of a cluster, taken in turn', () => {
  it('advance goes round the list and comes back to the first', () => {
    const urls = new UrlRotation([A, B, C]);
    assert.equal(urls.current, A);
    assert.deepEqual([urls.advance(), urls.advance(), urls.advance(), urls.advance()], [B, C, A, B]);
    const one = new UrlRotation(A);
    assert.equal(one.advance(), A, 'a single URL is its own next one');
  });

  it('connectAny moves past nodes that fail and stays on the one that answered', async () => {
    const urls = new UrlRotation([A, B, C]);
    const tried: string[] = [];
    const down = new Set([A, B]);
    const connect = async (url: string): Promise<string> => {
      tried.push(url);
      if (down.has(url)) throw new Error(`refused by ${url}`);
      return `model of ${url}`;
    };
    const failures: string[] = [];
    assert.equal(await urls.connectAny(connect, (url) => failures.push(url)), `model of ${C}`);
    assert.deepEqual(tried, [A, B, C]);
    assert.deepEqual(failures, [A, B]);
    assert.equal(urls.current, C, 'the next connect starts at the node that answered');
    tried.length = 0;
    await urls.connectAny(connect);
    assert.deepEqual(tried, [C]);
    // C is lost: the owner advances, and the next connect wraps round to A (back up now).
    down.clear();
    urls.advance();
    tried.length = 0;
    assert.equal(await urls.connectAny(connect), `model of ${A}`);
    assert.deepEqual(tried, [A]);
  });

  it('connectAny tries each URL once and rejects with the last failure when none answers', async () => {
    const urls = new UrlRotation([A, B]);
    const tried: string[] = [];
    await assert.rejects(
      urls.connectAny(async (url) => {
        tried.push(url);
        throw new Error(`refused by ${url}`);
      }),
      new RegExp(`refused by ${B}`),
    );
    assert.deepEqual(tried, [A, B]);
    assert.equal(urls.current, A, 'a full round ends where it began');
  });

  it('an empty list or a URL that is not amqp(s):// is FRONTIER_BAD_URL, naming no credentials', () => {
    const bad = (urls: string | string[]) => () => new UrlRotation(urls);
    const isBadUrl = (err: unknown) =>
      err instanceof AppError && err.code === 'FRONTIER_BAD_URL' && !err.message.includes('secret');
    assert.throws(bad([]), isBadUrl);
    assert.throws(bad('http://u:secret@10.0.0.1:15672'), isBadUrl);
    assert.throws(bad([A, `${B},${C}`]), isBadUrl, 'a comma list in one entry');
    assert.deepEqual(brokerUrlList([A, C]), [A, C]);
    assert.equal(describeUrl(A), 'amqp://10.0.0.1:5672');
    assert.equal(describeUrl(C), 'amqps://10.0.0.3:5671/vh');
  });
});

describe('ACKCRAWL_AMQP_URL as a list', () => {
  for (const [role, schema] of [
    ['scheduler', schedulerConfigSchema],
    ['master', masterConfigSchema],
  ] as const) {
    it(`${role}: one URL, or several separated by spaces or commas; validated once`, () => {
      assert.deepEqual(loadConfig(schema, {}).amqpUrl, ['amqp://guest:guest@127.0.0.1:5672']);
      assert.deepEqual(loadConfig(schema, { ACKCRAWL_AMQP_URL: A }).amqpUrl, [A]);
      assert.deepEqual(loadConfig(schema, { ACKCRAWL_AMQP_URL: `${A}, ${B} ${C}` }).amqpUrl, [A, B, C]);
      assert.throws(
        () => loadConfig(schema, { ACKCRAWL_AMQP_URL: `${A},10.0.0.2:5672` }),
        (err: unknown) => err instanceof ConfigError && /ACKCRAWL_AMQP_URL/.test(err.message),
      );
      assert.throws(
        () => loadConfig(schema, { ACKCRAWL_AMQP_URL: ' , ' }),
        (err: unknown) => err instanceof ConfigError && /ACKCRAWL_AMQP_URL/.test(err.message),
      );
    });
  }
});
