import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { masterConfigSchema } from '../../master/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';

describe('master settings that depend on each other', () => {
  it('an agent heartbeat longer than a third of the lost bound is refused, naming both', () => {
    assert.equal(loadConfig(masterConfigSchema, {}).agentHeartbeatMs, 2_000);
    assert.equal(
      loadConfig(masterConfigSchema, {
        ACKCRAWL_AGENT_HEARTBEAT_MS: '3000',
        ACKCRAWL_AGENT_LOST_AFTER_MS: '9000',
      }).agentHeartbeatMs,
      3_000,
    );
    assert.throws(
      () => loadConfig(masterConfigSchema, { ACKCRAWL_AGENT_HEARTBEAT_MS: '5000' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /ACKCRAWL_AGENT_HEARTBEAT_MS/.test(err.message) &&
        /agentLostAfterMs \(10000 ms\)/.test(err.message),
    );
  });
});
