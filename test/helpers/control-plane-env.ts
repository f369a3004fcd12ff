import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { AMQP_URL } from './rabbitmq.js';
import { masterApi } from './serve.js';
import { TestRole } from './role-process.js';
import { waitFor } from './wait-for.js';

export interface ControlPlane {
  /** For every role: the master, schedulers and agents read the same variables. */
  env: NodeJS.ProcessEnv;
  /** The Kafka topic of the page records (unique to the test). */
  topic: string;
  adminToken: string;
  masterUrl: string;
}

/**
 * The environment of a whole distributed deployment for one test: master on the SQL database
 * given, run control and frontier on RabbitMQ and records on Kafka under names unique to the test,
 * state under `dir`, fast heartbeats; `extra` goes over the defaults.
 */
export async function controlPlaneEnv(
  sqlUrl: string,
  dir: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<ControlPlane> {
  const id = randomUUID().slice(0, 8);
  const masterPort = await freePort();
  const listenPort = await freePort();
  const adminToken = `admin-${randomUUID()}`;
  const topic = `test-${id}.pages`;
  const masterUrl = `http://127.0.0.1:${masterPort}`;
  const env: NodeJS.ProcessEnv = {
    ACKCRAWL_SQL_URL: sqlUrl,
    ACKCRAWL_AMQP_URL: AMQP_URL,
    ACKCRAWL_FRONTIER: 'rabbitmq',
    ACKCRAWL_QUEUE_PREFIX: `test-${id}`,
    ACKCRAWL_RUN_CONTROL: 'rabbitmq',
    ACKCRAWL_RUN_CONTROL_EXCHANGE: `test-${id}.run-control`,
    ACKCRAWL_SINK: 'kafka',
    ACKCRAWL_KAFKA_TOPIC: topic,
    ACKCRAWL_OUT_DIR: join(dir, 'out'),
    ACKCRAWL_DATA_DIR: join(dir, 'data'),
    ACKCRAWL_TOKEN: `test-token-${randomUUID()}`,
    ACKCRAWL_ADMIN_TOKEN: adminToken,
    ACKCRAWL_MASTER_PORT: String(masterPort),
    ACKCRAWL_LISTEN_PORT: String(listenPort),
    ACKCRAWL_SCHEDULER_URL: `ws://127.0.0.1:${listenPort}/crawlers`,
    ACKCRAWL_RUN_HEARTBEAT_MS: '1000',
    ACKCRAWL_HEARTBEAT_MS: '1000',
    ACKCRAWL_PROCESSES: '2',
    ACKCRAWL_CONCURRENCY: '4',
    ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'warn',
    ...extra,
  };
  return { env, topic, adminToken, masterUrl };
}

/** Starts `ackcrawl master` with the plane's environment and waits until its API answers. */
export async function startMasterRole(plane: ControlPlane): Promise<{
  master: TestRole;
  api: ReturnType<typeof masterApi>;
}> {
  const master = new TestRole('master', plane.env).start();
  const api = masterApi(plane.masterUrl, plane.adminToken);
  await waitFor(async () => (await api('GET', '/jobs').catch(() => ({ status: 0 }))).status === 200, {
    timeoutMs: 30_000,
    message: () => `master answering (${master.stderr})`,
  });
  return { master, api };
}
