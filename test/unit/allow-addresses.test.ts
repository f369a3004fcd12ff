import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAgents, type Agents } from '../../client/crawler/fetch/agents.js';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';

describe('ACKCRAWL_ALLOW_ADDRESSES', () => {
  test('reads IPs and CIDRs, separated by spaces or commas; none by default', () => {
    assert.deepEqual(loadConfig(schedulerConfigSchema, {}).allowAddresses, []);
    const config = loadConfig(schedulerConfigSchema, {
      ACKCRAWL_ALLOW_ADDRESSES: '10.1.2.3, 192.168.0.0/16 ::1 fd00::/8',
    });
    assert.deepEqual(config.allowAddresses, ['10.1.2.3', '192.168.0.0/16', '::1', 'fd00::/8']);
  });

  test('rejects what is not an IP or a CIDR, naming the setting', () => {
    for (const bad of ['intranet.example', '10.0.0.0/33', '10.0.0.1/8/8', '::1/129', '10.0.0.0/']) {
      let error: unknown = null;
      try {
        loadConfig(schedulerConfigSchema, { ACKCRAWL_ALLOW_ADDRESSES: bad });
      } catch (err) {
        error = err;
      }
      assert.ok(error instanceof ConfigError, bad);
      assert.match(error.message, /allowAddresses|ALLOW_ADDRESSES/, bad);
    }
  });
});

describe('the address filter with an allow list', () => {
  let server: Server;
  let port: number;
  const agents: Agents[] = [];
  const settings: FetchSettings = {
    userAgent: 'ackcrawl-test/1',
    connectTimeoutMs: 1_000,
    responseTimeoutMs: 1_000,
    totalTimeoutMs: 2_000,
    maxRedirects: 3,
    maxBodyBytes: 1024,
    allowPrivate: false,
  };
  const fetcher = (allowAddresses: string[]): Fetcher => {
    const a = createAgents({ allowPrivate: false, allowAddresses });
    agents.push(a);
    return new Fetcher({ ...settings, allowAddresses }, a);
  };

  before(async () => {
    server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const a of agents) a.http.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a listed address or a CIDR that holds it is fetched; others stay refused', async () => {
    assert.equal((await fetcher(['127.0.0.1']).fetch(`http://127.0.0.1:${port}/`)).status, 200);
    assert.equal((await fetcher(['127.0.0.0/8']).fetch(`http://127.0.0.1:${port}/`)).status, 200);
    for (const list of [[], ['127.0.0.2'], ['10.0.0.0/8']]) {
      await assert.rejects(
        fetcher(list).fetch(`http://127.0.0.1:${port}/`),
        (err: unknown) => err instanceof FetchError && err.code === 'ADDRESS_BLOCKED',
        JSON.stringify(list),
      );
    }
  });
});
