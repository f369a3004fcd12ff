import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';
import { extractConfigSchema } from '../../master/extract/config.js';

describe('ackcrawl extract configuration', () => {
  test('read from ACKCRAWL_* variables, defaults for the rest', () => {
    const config = loadConfig(extractConfigSchema, {
      ACKCRAWL_KAFKA_BROKERS: '127.0.0.1:9092, 127.0.0.1:9093',
      ACKCRAWL_SQL_URL: 'postgres://u:p@127.0.0.1:5432/db',
      ACKCRAWL_EXTRACT_GROUP_ID: 'cleaners',
      ACKCRAWL_EXTRACT_FOLLOW: 'false',
    });
    assert.deepEqual(config.kafkaBrokers, ['127.0.0.1:9092', '127.0.0.1:9093']);
    assert.equal(config.sqlUrl, 'postgres://u:p@127.0.0.1:5432/db');
    assert.equal(config.extractGroupId, 'cleaners');
    assert.equal(config.extractFollow, false);
    assert.equal(config.extractChunkRecords, 50);
    assert.equal(config.extractRecordsDir, undefined);
    assert.ok(Object.isFrozen(config));
  });

  test('every problem at once, named by its variable', () => {
    assert.throws(
      () =>
        loadConfig(extractConfigSchema, {
          ACKCRAWL_KAFKA_BROKERS: 'no-port',
          ACKCRAWL_EXTRACT_CHUNK_RECORDS: '0',
          ACKCRAWL_EXTRACT_FOLLOW: 'perhaps',
        }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /ACKCRAWL_KAFKA_BROKERS/.test(err.message) &&
        /ACKCRAWL_EXTRACT_CHUNK_RECORDS/.test(err.message) &&
        /ACKCRAWL_EXTRACT_FOLLOW/.test(err.message),
    );
  });
});
