import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { serveEnv } from '../../master/cli/serve/serve-env.js';

describe('serveEnv: what the roles of ackcrawl serve are given', () => {
  test('embedded defaults, one data dir for every role', () => {
    const env = serveEnv({ dataDir: 'state', verbose: false }, {});
    assert.equal(env.ACKCRAWL_DATA_DIR, resolve('state'));
    assert.equal(env.ACKCRAWL_FRONTIER, 'sqlite');
    assert.equal(env.ACKCRAWL_SINK, 'file');
    assert.equal(env.ACKCRAWL_RUN_CONTROL, 'local');
    assert.equal(env.ACKCRAWL_OUT_DIR, resolve('state', 'crawl-output'));
    assert.equal(
      env.ACKCRAWL_SCHEDULER_OUT_DIR,
      env.ACKCRAWL_OUT_DIR,
      "the master finds the scheduler's file",
    );
    assert.equal(env.ACKCRAWL_SERVE_RUNS, 'true');
    assert.equal(env.ACKCRAWL_EXIT_WHEN_DONE, 'false');
    assert.equal(
      env.ACKCRAWL_SQL_URL,
      undefined,
      'the SQLite default of the data dir, for master and scheduler alike',
    );
  });

  test("the roles' own variables pass through; --data-dir and --processes win", () => {
    const env = serveEnv(
      { dataDir: 'mine', processes: '4', verbose: true },
      {
        ACKCRAWL_MASTER_PORT: '9600',
        ACKCRAWL_ADMIN_TOKEN: 'a-token-of-sixteen+',
        ACKCRAWL_LISTEN_PORT: '9700',
        ACKCRAWL_DATA_DIR: '/elsewhere',
        ACKCRAWL_PROCESSES: '1',
      },
    );
    assert.equal(env.ACKCRAWL_MASTER_PORT, '9600');
    assert.equal(env.ACKCRAWL_ADMIN_TOKEN, 'a-token-of-sixteen+');
    assert.equal(env.ACKCRAWL_LISTEN_PORT, '9700');
    assert.equal(env.ACKCRAWL_DATA_DIR, resolve('mine'));
    assert.equal(env.ACKCRAWL_PROCESSES, '4');
    assert.equal(env.ACKCRAWL_LOG_LEVEL, 'info');
  });

  test('a RabbitMQ frontier brings run commands over RabbitMQ', () => {
    const env = serveEnv({ dataDir: 'd', verbose: false }, { ACKCRAWL_FRONTIER: 'rabbitmq' });
    assert.equal(env.ACKCRAWL_RUN_CONTROL, 'rabbitmq');
    assert.equal(env.ACKCRAWL_RUN_SYNC_INTERVAL_MS, undefined);
  });
});
