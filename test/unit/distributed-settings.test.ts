import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { loadConfig } from '../../shared/config/load.js';
import { kafkaSettingsSchema } from '../../shared/config/kafka-settings.js';
import { s3SettingsSchema } from '../../shared/config/s3-settings.js';
import { ConfigError } from '../../shared/errors.js';

const roleSchema = z.object({ ...kafkaSettingsSchema.shape, ...s3SettingsSchema.shape });

test('defaults point at the loopback services', () => {
  const config = loadConfig(roleSchema, {});
  assert.deepEqual(config.kafkaBrokers, ['127.0.0.1:9092']);
  assert.equal(config.kafkaTopic, 'ackcrawl.pages');
  assert.equal(config.s3Endpoint, 'http://127.0.0.1:9000');
  assert.equal(config.s3AccessKey, 'ackcrawl');
  assert.equal(config.s3SecretKey, 'ackcrawl-secret');
  assert.equal(config.s3Bucket, 'ackcrawl');
  assert.equal(config.kafkaCompression, 'none');
});

test('reads the ACKCRAWL_ environment names', () => {
  const config = loadConfig(roleSchema, {
    ACKCRAWL_KAFKA_BROKERS: 'k1:9092, k2:9092',
    ACKCRAWL_KAFKA_TOPIC: 'pages.v1',
    ACKCRAWL_S3_ENDPOINT: 'https://s3.example:443',
    ACKCRAWL_S3_ACCESS_KEY: 'AK',
    ACKCRAWL_S3_SECRET_KEY: 'SK',
    ACKCRAWL_S3_BUCKET: 'crawl-bodies',
    ACKCRAWL_KAFKA_BODY_THRESHOLD_BYTES: '100000',
    ACKCRAWL_KAFKA_COMPRESSION: 'gzip',
  });
  assert.equal(config.kafkaCompression, 'gzip');
  assert.deepEqual(config.kafkaBrokers, ['k1:9092', 'k2:9092']);
  assert.equal(config.kafkaTopic, 'pages.v1');
  assert.equal(config.s3Endpoint, 'https://s3.example:443');
  assert.equal(config.s3SecretKey, 'SK');
  assert.equal(config.s3Bucket, 'crawl-bodies');
  assert.equal(config.kafkaBodyThresholdBytes, 100_000);
});

test('reports every bad value at once, with its environment name', () => {
  assert.throws(
    () =>
      loadConfig(roleSchema, {
        ACKCRAWL_KAFKA_BROKERS: 'no-port',
        ACKCRAWL_KAFKA_TOPIC: 'bad topic',
        ACKCRAWL_S3_ENDPOINT: 'ftp://x',
        ACKCRAWL_S3_BUCKET: 'Upper_Case',
        ACKCRAWL_KAFKA_COMPRESSION: 'zstd',
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      const text = err.problems.join('\n');
      for (const name of ['KAFKA_BROKERS', 'KAFKA_TOPIC', 'S3_ENDPOINT', 'S3_BUCKET', 'KAFKA_COMPRESSION']) {
        assert.match(text, new RegExp(`ACKCRAWL_${name}`));
      }
      return true;
    },
  );
});
