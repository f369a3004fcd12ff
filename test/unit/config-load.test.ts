import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { envName, field, loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';

const schema = z.object({
  listenHost: z.string().default('127.0.0.1'),
  leaseTimeoutMs: field.int(1).default(120_000),
  maxBodyBytes: field.int(1).default(1024),
  allowPrivate: field.bool().default(false),
  seeds: field.list().default([]),
  scope: z.enum(['host', 'domain', 'any']).default('host'),
});

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a ConfigError');
}

describe('envName', () => {
  test('derives ACKCRAWL_<SNAKE_CASE> from a camelCase key', () => {
    assert.equal(envName('leaseTimeoutMs'), 'ACKCRAWL_LEASE_TIMEOUT_MS');
    assert.equal(envName('maxBodyBytes'), 'ACKCRAWL_MAX_BODY_BYTES');
    assert.equal(envName('token'), 'ACKCRAWL_TOKEN');
    assert.equal(envName('s3Bucket'), 'ACKCRAWL_S3_BUCKET');
    assert.equal(envName('listenPort', 'X_'), 'X_LISTEN_PORT');
  });
});

describe('loadConfig', () => {
  test('defaults when nothing is set', () => {
    assert.deepEqual(
      { ...loadConfig(schema, {}) },
      {
        listenHost: '127.0.0.1',
        leaseTimeoutMs: 120_000,
        maxBodyBytes: 1024,
        allowPrivate: false,
        seeds: [],
        scope: 'host',
      },
    );
  });

  test('reads each key from its derived env name and coerces strings', () => {
    const config = loadConfig(schema, {
      ACKCRAWL_LISTEN_HOST: '0.0.0.0',
      ACKCRAWL_LEASE_TIMEOUT_MS: '5000',
      ACKCRAWL_ALLOW_PRIVATE: 'yes',
      ACKCRAWL_SEEDS: 'https://a.test/, https://b.test/\nhttps://c.test/',
      ACKCRAWL_SCOPE: 'domain',
      LEASE_TIMEOUT_MS: '1', // not ours: no prefix
      leaseTimeoutMs: '2', // not ours: the key itself is not an env name
    });
    assert.equal(config.listenHost, '0.0.0.0');
    assert.equal(config.leaseTimeoutMs, 5000);
    assert.equal(config.allowPrivate, true);
    assert.deepEqual(config.seeds, ['https://a.test/', 'https://b.test/', 'https://c.test/']);
    assert.equal(config.scope, 'domain');
  });

  test('boolean words are read both ways, case-insensitively', () => {
    for (const yes of ['1', 'true', 'TRUE', 'yes', 'on']) {
      assert.equal(loadConfig(schema, { ACKCRAWL_ALLOW_PRIVATE: yes }).allowPrivate, true, yes);
    }
    for (const no of ['0', 'false', 'False', 'no', 'off']) {
      assert.equal(loadConfig(schema, { ACKCRAWL_ALLOW_PRIVATE: no }).allowPrivate, false, no);
    }
  });

  test('an empty env value counts as unset', () => {
    assert.equal(loadConfig(schema, { ACKCRAWL_LEASE_TIMEOUT_MS: '' }).leaseTimeoutMs, 120_000);
  });

  test('every problem is reported at once, each naming its key and env variable', () => {
    const err = configError(() =>
      loadConfig(schema, {
        ACKCRAWL_LEASE_TIMEOUT_MS: 'soon',
        ACKCRAWL_MAX_BODY_BYTES: '1.5',
        ACKCRAWL_SCOPE: 'planet',
        ACKCRAWL_ALLOW_PRIVATE: 'ture',
      }),
    );
    assert.equal(err.code, 'CONFIG_INVALID');
    assert.equal(err.retriable, false);
    assert.equal(err.problems.length, 4, err.problems.join('\n'));
    const keys = ['leaseTimeoutMs', 'maxBodyBytes', 'scope', 'allowPrivate'];
    for (const key of keys) {
      const problem = err.problems.find((p) => p.startsWith(`${key} (${envName(key)}):`));
      assert.ok(problem, `a problem for ${key} in ${err.problems.join(' | ')}`);
      assert.ok(err.message.includes(problem), 'the message lists it too');
    }
  });

  test('overrides win over the environment and are validated the same way', () => {
    const config = loadConfig(
      schema,
      { ACKCRAWL_LEASE_TIMEOUT_MS: '5000', ACKCRAWL_LISTEN_HOST: '0.0.0.0' },
      { leaseTimeoutMs: 7000, listenHost: undefined },
    );
    assert.equal(config.leaseTimeoutMs, 7000);
    assert.equal(config.listenHost, '0.0.0.0', 'an undefined override leaves the env value');

    const err = configError(() => loadConfig(schema, {}, { maxBodyBytes: 0 }));
    assert.equal(err.problems.length, 1);
    assert.match(err.problems[0] ?? '', /^maxBodyBytes \(ACKCRAWL_MAX_BODY_BYTES\):/);
  });

  test('the result is frozen', () => {
    const config = loadConfig(schema, {});
    assert.ok(Object.isFrozen(config));
    assert.throws(() => {
      (config as { listenHost: string }).listenHost = 'elsewhere';
    }, TypeError);
  });
});
