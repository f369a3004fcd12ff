import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Koa from 'koa';
import { startAlerting, type Alerting, type AlertingOptions } from '../../master/alerts/alerting.js';
import { createAgentNudge } from '../../master/adapters/agent-nudge.js';
import { createMasterApp } from '../../master/api/app.js';
import { hashSecret } from '../../master/api/auth/secrets.js';
import { bootstrapAdminToken } from '../../master/api/auth/bootstrap-admin.js';
import type { SchedulerHosts, SchedulerWhy } from '../../master/api/deps.js';
import { startLostSweeper } from '../../master/fleet/lost-sweeper.js';
import { nodeCronEngine } from '../../master/schedules/cron-engine.js';
import { createLocalRunControl } from '../../shared/adapters/run-control/local-run-control.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { createHostPolicy } from '../../shared/http/request-guards.js';
import { silentLogger } from '../../shared/logger.js';
import type { RunCommand, RunControl } from '../../shared/ports/run-control.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { Registry } from '../../shared/metrics/registry.js';
import type { MasterMetrics } from '../../master/metrics/master-metrics.js';
import { LiveSampler } from '../../master/dashboard/live-sampler.js';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is (no JSON encoding, no Content-Type unless given). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestMaster {
  url: string;
  /** The Koa app, as createMasterApp built it. */
  app: Koa;
  port: number;
  dir: string;
  store: SqlStore;
  runControl: RunControl;
  /** Every command published, in order. */
  commands: RunCommand[];
  adminToken: string;
  /** The agent credential the fleet routes take. */
  agentToken: string;
  clock: { now(): number; advance(ms: number): void };
  /** The alert engine and webhook delivery over this store; their loops wait for the test to call. */
  alerting: Alerting;
  /** The dashboard's sampler, when asked for (never started: call tick()). */
  live: LiveSampler | null;
  call(method: string, path: string, options?: CallOptions): Promise<Answer>;
  /** Closes the app and the store, and opens both again on the same SQLite file. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export const STALE_AFTER_MS = 15_000;
export const AGENT_LOST_AFTER_MS = 10_000;

/** One pass of the lost sweeper over the master's store, at its clock: the ids it marked lost. */
export async function sweepLost(master: Pick<TestMaster, 'store' | 'clock'>): Promise<string[]> {
  const sweeper = startLostSweeper({
    agents: master.store.agents,
    lostAfterMs: AGENT_LOST_AFTER_MS,
    everyMs: 60_000,
    now: master.clock.now,
    logger: silentLogger(),
  });
  try {
    return await sweeper.sweep();
  } finally {
    await sweeper.close();
  }
}

/** Calls a loopback server with node's http client (it reads an answer sent before the body went out). */
export function callServer(
  port: number,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    // A fresh connection per call (agent: false): a restarted server leaves no stale keep-alive socket.
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: unknown = undefined;
        try {
          json = JSON.parse(text);
        } catch {
          // left undefined: the test names what it expected
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The master's API as createMasterApp builds it, over the real SQLite store in a temp dir and the
 * in-process run control, served on 127.0.0.1 (a free port), with the bootstrap admin token made
 * as the master makes it at start.
 */
export async function startTestMaster(
  options: {
    why?: SchedulerWhy;
    hosts?: SchedulerHosts;
    dir?: string;
    /** Where the test clock starts (default 2026-01-01). */
    startAt?: number;
    /** Alerting settings over the defaults: private webhook URLs allowed (the receivers are on 127.0.0.1). */
    alerting?: Partial<Omit<AlertingOptions, 'store' | 'clock' | 'newId' | 'logger'>>;
    /** The registry served at GET /metrics and the master's series on it (as master/main.ts wires them). */
    metrics?: { registry: Registry; series: MasterMetrics };
    /** Serve the dashboard (its files, from assetsDir if given, and /live over a sampler the test ticks). */
    dashboard?: { assetsDir?: string };
  } = {},
): Promise<TestMaster> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ackcrawl-master-'));
  const dbUrl = `sqlite:${join(dir, 'master.db')}`;
  let now = options.startAt ?? Date.UTC(2026, 0, 1);
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const commands: RunCommand[] = [];
  const why: SchedulerWhy = options.why ?? {
    explain: async () => {
      throw new Error('no why in this test');
    },
  };
  const hosts: SchedulerHosts = options.hosts ?? {
    top: async () => {
      throw new Error('no hosts in this test');
    },
  };
  let store: SqlStore;
  let runControl: RunControl;
  let server: Server;
  let app: Koa;
  let port = 0;
  let adminToken = '';
  let alerting: Alerting;
  let live: LiveSampler | null = null;
  const agentToken = `acka_test-${randomUUID()}`;

  const open = async (): Promise<void> => {
    store = await openSqlStore(dbUrl);
    runControl = createLocalRunControl(silentLogger());
    await runControl.subscribe((c) => void commands.push(c));
    adminToken = (
      await bootstrapAdminToken({
        tokens: store.tokens,
        dataDir: dir,
        configured: undefined,
        now: clock.now,
        newId: randomUUID,
        logger: silentLogger(),
      })
    ).secret;
    alerting = startAlerting({
      store,
      clock,
      newId: randomUUID,
      logger: silentLogger(),
      // An hour: the tests run the passes themselves (alerting.evaluateNow, deliverNow).
      alertIntervalMs: 3_600_000,
      webhookIntervalMs: 3_600_000,
      allowPrivate: true,
      timeoutMs: 5_000,
      retry: { baseMs: 1_000, maxMs: 60_000, maxAttempts: 5 },
      ...(options.metrics ? { metrics: options.metrics.series } : {}),
      ...options.alerting,
    });
    // Not started: the test takes each snapshot with live.tick().
    live = options.dashboard
      ? new LiveSampler({
          store,
          clock,
          logger: silentLogger(),
          staleAfterMs: STALE_AFTER_MS,
          agentLostAfterMs: AGENT_LOST_AFTER_MS,
        })
      : null;
    app = createMasterApp({
      ...(live === null
        ? {}
        : {
            dashboard: {
              live,
              ...(options.dashboard?.assetsDir ? { assetsDir: options.dashboard.assetsDir } : {}),
            },
          }),
      store,
      runControl,
      why,
      hosts,
      cron: nodeCronEngine(),
      clock,
      newId: randomUUID,
      logger: silentLogger(),
      fleet: {
        agentTokenHash: hashSecret(agentToken),
        nudge: createAgentNudge({ agentToken, logger: silentLogger() }),
      },
      options: {
        hosts: createHostPolicy({ listenHost: '127.0.0.1', allowedHosts: [], service: 'master' }),
        staleAfterMs: STALE_AFTER_MS,
        maxBodyBytes: 64 * 1024,
        agentLostAfterMs: AGENT_LOST_AFTER_MS,
      },
      alerting: alerting.api,
      ...(options.metrics ? { metrics: options.metrics.registry } : {}),
    });
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  const shut = async (): Promise<void> => {
    live?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await alerting.close();
    await runControl.close();
    await store.close();
  };
  await open();
  const master: TestMaster = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    get app() {
      return app;
    },
    dir,
    get store() {
      return store;
    },
    get runControl() {
      return runControl;
    },
    commands,
    get adminToken() {
      return adminToken;
    },
    agentToken,
    clock,
    get alerting() {
      return alerting;
    },
    get live() {
      return live;
    },
    call: (method, path, callOptions = {}) =>
      callServer(port, method, path, { token: adminToken, ...callOptions }),
    restart: async () => {
      await shut();
      await open();
    },
    close: async () => {
      await shut();
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
  return master;
}

/** A small valid job body. */
export function jobBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: `job-${randomUUID()}`, seeds: ['https://example.test/'], maxPages: 10, ...overrides };
}

/** The error shape every refusal has: a status, a code, a message, no stack trace. */
export function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, `${code}: ${answer.text}`);
  assert.equal(answer.json?.error?.code, code, answer.text);
  assert.ok(String(answer.json?.error?.message ?? '').length > 0);
  assert.match(String(answer.headers['content-type']), /^application\/json/);
  assert.ok(!/\n\s+at /.test(answer.text), 'no stack trace');
}

/** The fields the problems of a 400 name, each once, sorted. */
export function problemFields(answer: Answer): string[] {
  return [...new Set((answer.json.error.problems as { field: string }[]).map((p) => p.field))].sort();
}
