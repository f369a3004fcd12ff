import assert from 'node:assert/strict';
import { makeCertificate } from '../helpers/tls-cert.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get as httpsGet, createServer as createHttpsServer, type Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { minioTransportAgent } from '../../shared/adapters/blob-store/minio-blob-store.js';
import { amqpConnector } from '../../shared/config/amqp-connect.js';
import { loadConfig } from '../../shared/config/load.js';
import {
  isCertificateError,
  kafkaSsl,
  listensInClear,
  readTlsCa,
  readTlsServerOptions,
} from '../../shared/config/tls.js';
import { ConfigError } from '../../shared/errors.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { masterConfigSchema } from '../../master/config.js';

/**
 * The TLS option builders of the service clients, against a local TLS listener with a self-signed
 * certificate: with ACKCRAWL_TLS_CA the certificate verifies, without it the client refuses it.
 */
describe('TLS settings and client options', () => {
  let dir: string;
  let cert: string;
  let key: string;
  let server: ReturnType<typeof createHttpsServer>;
  let port: number;
  let handshakes = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-tls-unit-'));
    ({ cert, key } = makeCertificate(dir));
    const options = readTlsServerOptions({ tlsCert: cert, tlsKey: key });
    assert.ok(options);
    server = createHttpsServer(options, (_req, res) => res.end('ok'));
    server.on('secureConnection', () => handshakes++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  test('one file without the other is a ConfigError naming both variables, in every listener role', () => {
    for (const schema of [schedulerConfigSchema, masterConfigSchema]) {
      for (const env of [{ ACKCRAWL_TLS_CERT: '/c.pem' }, { ACKCRAWL_TLS_KEY: '/k.pem' }]) {
        assert.throws(
          () => loadConfig(schema, env),
          (err: unknown) =>
            err instanceof ConfigError &&
            /TLS needs both ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY/.test(err.message),
        );
      }
    }
    assert.equal(readTlsServerOptions(loadConfig(schedulerConfigSchema, {})), null);
  });

  test('the "in clear" warning is for a listener beyond loopback without TLS only', () => {
    const tls = { tlsCert: cert, tlsKey: key };
    assert.equal(listensInClear('0.0.0.0', {}), true);
    assert.equal(listensInClear('192.0.2.1', {}), true);
    assert.equal(listensInClear('0.0.0.0', tls), false);
    assert.equal(listensInClear('::', tls), false);
    assert.equal(listensInClear('127.0.0.1', {}), false);
    assert.equal(listensInClear('::1', {}), false);
  });

  test('ACKCRAWL_TLS_CA adds its CAs to the system ones; an unreadable file is a ConfigError naming it', () => {
    assert.equal(readTlsCa({}), undefined);
    const ca = readTlsCa({ tlsCa: cert }) as string[];
    assert.equal(ca.length, rootCertificates.length + 1);
    assert.equal(ca.at(-1), readFileSync(cert, 'utf8'));
    assert.throws(
      () => readTlsCa({ tlsCa: join(dir, 'missing.pem') }),
      (err: unknown) =>
        err instanceof ConfigError && /ACKCRAWL_TLS_CA/.test(err.message) && /ENOENT/.test(err.message),
    );
  });

  test('kafkajs ssl: off unless ACKCRAWL_KAFKA_TLS, verified, with the CAs when given', () => {
    assert.equal(kafkaSsl(false, readTlsCa({ tlsCa: cert })), undefined);
    assert.deepEqual(kafkaSsl(true, undefined), { rejectUnauthorized: true });
    const ca = readTlsCa({ tlsCa: cert });
    assert.deepEqual(kafkaSsl(true, ca), { rejectUnauthorized: true, ca });
    assert.equal(loadConfig(schedulerConfigSchema, { ACKCRAWL_KAFKA_TLS: 'true' }).kafkaTls, true);
  });

  const fetchVia = (agent: Agent): Promise<string | number> =>
    new Promise((resolve) => {
      httpsGet({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });

  test('the MinIO transport agent verifies an https endpoint against the CAs', async () => {
    const trusted = minioTransportAgent(true, readTlsCa({ tlsCa: cert }));
    const untrusted = minioTransportAgent(true);
    try {
      assert.equal(await fetchVia(trusted as Agent), 200);
      assert.equal(await fetchVia(untrusted as Agent), 'DEPTH_ZERO_SELF_SIGNED_CERT');
    } finally {
      trusted.destroy();
      untrusted.destroy();
    }
  });

  test('amqps:// with the CA gets through the TLS handshake; without it the certificate is refused', async () => {
    const url = `amqps://guest:guest@127.0.0.1:${port}`;
    const before = handshakes;
    // The listener speaks HTTP, not AMQP: past the handshake the connection fails for that reason.
    const withCa = await amqpConnector(
      'test',
      readTlsCa({ tlsCa: cert }),
    )(url).then(
      () => assert.fail('not an AMQP server'),
      (err: unknown) => err,
    );
    assert.equal(isCertificateError(withCa), false, String(withCa));
    assert.equal(handshakes, before + 1, 'the TLS handshake completed');
    const withoutCa = await amqpConnector(
      'test',
      undefined,
    )(url).then(
      () => assert.fail('not an AMQP server'),
      (err: unknown) => err,
    );
    assert.equal(isCertificateError(withoutCa), true, String(withoutCa));
  });
});
