import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentConfigSchema } from '../../client/agent/config.js';
import { agentHostPolicy } from '../../client/agent/host-policy.js';
import { loadConfig } from '../../shared/config/load.js';

const policy = (env: NodeJS.ProcessEnv) => agentHostPolicy(loadConfig(agentConfigSchema, env));

describe("the agent API's Host names", () => {
  it('off loopback: the name in agentUrl and the listed names are answered; others are refused, naming the setting', () => {
    const hosts = policy({
      ACKCRAWL_AGENT_HOST: '0.0.0.0',
      ACKCRAWL_AGENT_URL: 'http://crawler-7.internal:8800',
      ACKCRAWL_AGENT_ALLOWED_HOSTS: 'agents.example.net',
    });
    assert.equal(hosts.check('crawler-7.internal:8800'), null);
    assert.equal(hosts.check('agents.example.net:8800'), null);
    assert.equal(hosts.check('10.0.0.7:8800'), null, 'an IP');
    const refused = hosts.check('evil.example:8800');
    assert.equal(refused?.code, 'HOST_NOT_ALLOWED');
    assert.match(refused?.message ?? '', /ACKCRAWL_AGENT_ALLOWED_HOSTS/);
  });

  it('on loopback (the default): loopback names only', () => {
    const hosts = policy({});
    assert.equal(hosts.check('127.0.0.1:8800'), null);
    assert.equal(hosts.check('localhost:8800'), null);
    assert.equal(hosts.check('crawler-7.internal:8800')?.code, 'HOST_NOT_ALLOWED');
  });
});
