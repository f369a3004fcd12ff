import assert from 'node:assert/strict';
import { test } from 'node:test';
import { archiverConfigSchema } from '../../client/archiver/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';

test('archiver settings: defaults point at the loopback services', () => {
  const config = loadConfig(archiverConfigSchema, {});
  assert.equal(config.kafkaTopic, 'ackcrawl.pages');
  assert.equal(config.s3Bucket, 'ackcrawl');
  assert.equal(config.archiveJobId, 'default');
  assert.equal(config.archiveGroupId, 'ackcrawl-archiver');
  assert.equal(config.archiveMaxRecords, 5000);
  assert.equal(config.archiveMaxBytes, 64 * 1024 * 1024);
  assert.equal(config.archiveMaxAgeMs, 60_000);
});

test('archiver settings come from ACKCRAWL_<KEY>, and every problem is reported at once', () => {
  const config = loadConfig(archiverConfigSchema, {
    ACKCRAWL_ARCHIVE_JOB_ID: 'task_001',
    ACKCRAWL_ARCHIVE_MAX_RECORDS: '10',
    ACKCRAWL_ARCHIVE_MAX_AGE_MS: '250',
  });
  assert.equal(config.archiveJobId, 'task_001');
  assert.equal(config.archiveMaxRecords, 10);
  assert.equal(config.archiveMaxAgeMs, 250);
  assert.throws(
    () =>
      loadConfig(archiverConfigSchema, {
        ACKCRAWL_ARCHIVE_JOB_ID: '../etc',
        ACKCRAWL_ARCHIVE_MAX_BYTES: '10',
        ACKCRAWL_KAFKA_TOPIC: 't'.repeat(131),
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 3, err.problems.join('\n'));
      assert.ok(err.problems.some((p) => p.includes('ACKCRAWL_ARCHIVE_JOB_ID')));
      assert.ok(err.problems.some((p) => p.includes('ACKCRAWL_ARCHIVE_MAX_BYTES')));
      assert.ok(err.problems.some((p) => p.includes('ACKCRAWL_KAFKA_TOPIC')));
      return true;
    },
  );
});
