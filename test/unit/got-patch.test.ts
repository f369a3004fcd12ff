import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, Agent as HttpAgent, type Server } from 'node:http';
import { createServer as createHttpsServer, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import got, { Options } from 'got';
import { makeCertificate } from '../helpers/tls-cert.js';

/** got's main module is dist/source/index.js; its Options class lives beside it. */
const optionsFile = join(fileURLToPath(import.meta.resolve('got')), '..', 'core', 'options.js');

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** patches/got+14.6.6.patch: the options got hands `http.request` carry no undefined keys. */
describe('the patched got request options', () => {
  let dir: string;
  let cert: { cert: Buffer; key: Buffer };
  const servers: Server[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'got-patch-'));
    const paths = makeCertificate(dir);
    cert = { cert: readFileSync(paths.cert), key: readFileSync(paths.key) };
  });

  after(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
  });

  test('is the one installed (npm ci runs patch-package)', () => {
    assert.match(readFileSync(optionsFile, 'utf8'), /ackcrawl patch/);
  });

  test('a plain request gets only what is set: no undefined TLS settings, the same values', () => {
    const agent = new HttpAgent({ keepAlive: true });
    const options = new Options('http://127.0.0.1:9/x', { agent: { http: agent }, headers: { 'x-a': '1' } });
    const native = options.createNativeRequestOptions() as Record<string, unknown>;
    for (const [key, value] of Object.entries(native)) assert.notEqual(value, undefined, key);
    assert.equal(native.agent, agent);
    assert.equal(native.method, 'GET');
    assert.equal(native.setHost, true);
    assert.equal(native.headers, options.headers);
    assert.ok(!('ca' in native) && !('servername' in native) && !('rejectUnauthorized' in native));
    assert.ok(Object.keys(native).length <= 8, `${Object.keys(native).length} keys`);
  });

  test('TLS settings that are set still reach the request', () => {
    const options = new Options('https://127.0.0.1:9/x', {
      https: { rejectUnauthorized: false, serverName: 'site.test', certificateAuthority: 'PEM' },
      localAddress: '127.0.0.1',
    });
    const native = options.createNativeRequestOptions() as Record<string, unknown>;
    assert.equal(native.rejectUnauthorized, false);
    assert.equal(native.servername, 'site.test');
    assert.equal(native.ca, 'PEM');
    assert.equal(native.localAddress, '127.0.0.1');
    assert.equal(typeof native.checkServerIdentity, 'function');
  });

  test('requests still work: HTTP through an agent, HTTPS trusting only a given certificate', async () => {
    const plain = createHttpServer((req, res) => res.end(`plain ${req.headers['x-a']}`));
    const secure = createHttpsServer(cert, (_req, res) => res.end('secure'));
    servers.push(plain, secure);
    const plainPort = await listen(plain);
    const securePort = await listen(secure);
    const agent = new HttpAgent({ keepAlive: true });
    const body = await got(`http://127.0.0.1:${plainPort}/`, {
      agent: { http: agent },
      headers: { 'x-a': 'yes' },
    }).text();
    assert.equal(body, 'plain yes');
    agent.destroy();

    const httpsAgent = new HttpsAgent({ keepAlive: false });
    const url = `https://127.0.0.1:${securePort}/`;
    // Not trusted: the certificate check still runs.
    await assert.rejects(got(url, { agent: { https: httpsAgent }, retry: { limit: 0 } }).text());
    const trusted = await got(url, {
      agent: { https: httpsAgent },
      https: { certificateAuthority: cert.cert },
    }).text();
    assert.equal(trusted, 'secure');
  });
});
