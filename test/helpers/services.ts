import { connect } from 'node:net';
import { loadConfig } from '../../shared/config/load.js';
import { kafkaSettingsSchema, type KafkaSettings } from '../../shared/config/kafka-settings.js';
import { s3SettingsSchema, type S3Settings } from '../../shared/config/s3-settings.js';

/**
 * The services the integration and contract tests use: the loopback defaults from
 * scripts/services.sh, or ACKCRAWL_KAFKA_BROKERS / ACKCRAWL_S3_* when set. Tests that need them
 * fail (never skip) when they are down: CI starts them.
 */
export const kafkaSettings: KafkaSettings = loadConfig(kafkaSettingsSchema, process.env);
export const s3Settings: S3Settings = loadConfig(s3SettingsSchema, process.env);

const checks = new Map<string, Promise<void>>();

function reachable(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function requireService(name: string, host: string, port: number): Promise<void> {
  const key = `${name}@${host}:${port}`;
  let check = checks.get(key);
  if (!check) {
    check = reachable(host, port).then((ok) => {
      if (!ok)
        throw new Error(`${name} is not reachable at ${host}:${port}; run: bash scripts/services.sh up`);
    });
    checks.set(key, check);
  }
  await check;
}

export function requireKafka(): Promise<void> {
  const [host = '127.0.0.1', port = '9092'] = (kafkaSettings.kafkaBrokers[0] ?? '').split(':');
  return requireService('Kafka', host, Number(port));
}

export function requireMinio(): Promise<void> {
  const url = new URL(s3Settings.s3Endpoint);
  return requireService('MinIO', url.hostname, Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
}

/**
 * The PostgreSQL of scripts/services.sh (role `ackcrawl` may create databases), or
 * ACKCRAWL_TEST_PG_URL. Tests make scratch databases on it and drop them.
 */
export const postgresUrl: string =
  process.env.ACKCRAWL_TEST_PG_URL ?? 'postgres://ackcrawl:ackcrawl@127.0.0.1:5432/ackcrawl';

export function requirePostgres(): Promise<void> {
  const url = new URL(postgresUrl);
  return requireService('PostgreSQL', url.hostname, Number(url.port || 5432));
}
