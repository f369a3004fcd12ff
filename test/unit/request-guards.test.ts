import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { bearerMatches } from '../../shared/http/bearer.js';
import { createHostPolicy, crossOriginProblem } from '../../shared/http/request-guards.js';
import { schedulerConfigSchema } from '../../scheduler/config.js';
import { loadConfig } from '../../shared/config/load.js';

const TOKEN = 'guard-token-0123456789';

describe('request guards', () => {
  test('bearer: only `Bearer <token>` exactly', () => {
    assert.equal(bearerMatches(`Bearer ${TOKEN}`, TOKEN), true);
    assert.equal(bearerMatches(`bearer   ${TOKEN} `, TOKEN), true);
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      TOKEN,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      `Bearer x${TOKEN}`,
      `Bearer ${TOKEN} extra`,
    ]) {
      assert.equal(bearerMatches(header, TOKEN), false, String(header));
    }
  });

  test('on loopback: loopback names and IPs only, plus allowed hosts', () => {
    const policy = createHostPolicy({ listenHost: '127.0.0.1', allowedHosts: ['tunnel.example:8700'] });
    for (const host of [
      '127.0.0.1:8700',
      'localhost',
      'LOCALHOST:1',
      '[::1]:8700',
      '127.0.0.9',
      'app.localhost:8700',
      'tunnel.example:8700',
    ]) {
      assert.equal(policy.check(host), null, host);
    }
    for (const host of [
      undefined,
      '',
      'evil.example',
      'evil.example:8700',
      '10.0.0.1:8700',
      'tunnel.example:9',
      'localhost.evil.example',
      'a@127.0.0.1',
      '127.0.0.1/x',
      hostname(),
    ]) {
      assert.equal(policy.check(host)?.code, 'HOST_NOT_ALLOWED', String(host));
      assert.equal(policy.check(host)?.status, 403);
    }
  });

  test('beyond loopback: IP literals, the host name and the allowed names', () => {
    const policy = createHostPolicy({ listenHost: '0.0.0.0', allowedHosts: ['*.crawl.example'] });
    for (const host of [
      '10.1.2.3:8700',
      '[fd00::1]:8700',
      'localhost',
      hostname(),
      'a.crawl.example',
      'b.a.crawl.example:8700',
    ]) {
      assert.equal(policy.check(host), null, host);
    }
    for (const host of ['crawl.example', 'evil.example', 'rebind.attacker.example:8700']) {
      assert.equal(policy.check(host)?.code, 'HOST_NOT_ALLOWED', host);
    }
    const open = createHostPolicy({ listenHost: '0.0.0.0', allowedHosts: ['*'] });
    assert.equal(open.check('anything.example'), null);
    assert.equal(open.check(undefined)?.code, 'HOST_NOT_ALLOWED', 'a request still needs a Host');
  });

  test('cross-origin: any Origin or cross-site fetch metadata but the same origin', () => {
    const host = '127.0.0.1:8700';
    assert.equal(crossOriginProblem({ host }, true), null, 'the CLI sends no Origin');
    assert.equal(
      crossOriginProblem({ host, 'sec-fetch-site': 'none' }, true),
      null,
      'typed in the address bar',
    );
    assert.equal(crossOriginProblem({ host, origin: 'http://127.0.0.1:8700' }, true), null);
    for (const headers of [
      { host, origin: 'http://evil.example' },
      { host, origin: 'null' },
      { host, origin: 'http://127.0.0.1:8701' },
      { host, 'sec-fetch-site': 'cross-site' },
      { host, 'sec-fetch-site': 'same-site' },
    ]) {
      assert.equal(crossOriginProblem(headers, true)?.code, 'CROSS_ORIGIN', JSON.stringify(headers));
    }
    assert.equal(
      crossOriginProblem({ host, origin: 'http://127.0.0.1:8700' }, false)?.code,
      'CROSS_ORIGIN',
      'the crawler endpoint takes no browser at all',
    );
  });
});

describe('scheduler access settings', () => {
  test('defaults: 127.0.0.1:8700, where agents, crawlers and the CLI look', () => {
    const config = loadConfig(schedulerConfigSchema, {});
    assert.equal(config.listenHost, '127.0.0.1');
    assert.equal(config.listenPort, 8700);
    assert.equal(config.token, undefined, 'no token given: the token file');
    assert.equal(config.dataDir, './ackcrawl-data');
  });

  test('ACKCRAWL_ALLOWED_HOSTS takes host patterns or *, and refuses anything else', () => {
    const config = loadConfig(schedulerConfigSchema, {
      ACKCRAWL_ALLOWED_HOSTS: '*.crawl.example  sched.example:8700,*',
    });
    assert.deepEqual(config.allowedHosts, ['*.crawl.example', 'sched.example:8700', '*']);
    assert.throws(
      () => loadConfig(schedulerConfigSchema, { ACKCRAWL_ALLOWED_HOSTS: 'http://sched.example/' }),
      /allowedHosts\.0 \(ACKCRAWL_ALLOWED_HOSTS\): a host pattern/,
    );
  });
});
