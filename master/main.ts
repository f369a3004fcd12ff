import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { ChannelModel } from 'amqplib';
import { hostname } from 'node:os';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { masterAgentToken } from '../shared/config/agent-token.js';
import { readTokenFile } from '../shared/config/cluster-token.js';
import { loadConfig } from '../shared/config/load.js';
import { amqpConnector } from '../shared/config/amqp-connect.js';
import { listensInClear, readTlsCa, readTlsServerOptions } from '../shared/config/tls.js';
import { defaultSqlStoreUrl } from '../shared/config/sql-settings.js';
import { openSqlStore } from '../shared/adapters/sql-store/open.js';
import { openRunControl } from '../shared/config/run-control.js';
import { UrlRotation } from '../shared/adapters/frontier/rabbitmq/broker-urls.js';
import { AppError, ConfigError } from '../shared/errors.js';
import { answerClientErrors } from '../shared/http/client-errors.js';
import { createHostPolicy } from '../shared/http/request-guards.js';
import { exitOnFault } from '../shared/lifecycle/faults.js';
import { isEntryPoint, onShutdownSignal } from '../shared/lifecycle/signals.js';
import { createLogger, type Logger } from '../shared/logger.js';
import type { RoleIpcMessage } from '../shared/protocol/ipc.js';
import { createAgentNudge } from './adapters/agent-nudge.js';
import { createSchedulerWhy } from './adapters/scheduler-why.js';
import { createSchedulerHosts } from './adapters/scheduler-hosts.js';
import { createSchedulerApi } from './adapters/scheduler-api.js';
import { runningScheduler } from './cli/running-scheduler.js';
import { startAlerting } from './alerts/alerting.js';
import { fleetFacts } from './alerts/fleet-facts.js';
import { hashSecret } from './api/auth/secrets.js';
import { startLostSweeper } from './fleet/lost-sweeper.js';
import { startTimeLimits } from './runs/time-limits.js';
import { startRunRetention } from './runs/retention.js';
import { createMasterApp } from './api/app.js';
import { LiveSampler } from './dashboard/live-sampler.js';
import { bootstrapAdminToken } from './api/auth/bootstrap-admin.js';
import { createRun, notifySchedulers } from './api/run-actions.js';
import { masterConfigSchema, type MasterConfig } from './config.js';
import { nodeCronEngine } from './schedules/cron-engine.js';
import { createScheduleLoop } from './schedules/schedule-loop.js';
import { createMetricsRegistry } from '../shared/metrics/registry.js';
import { createMasterMetrics, type MasterMetrics } from './metrics/master-metrics.js';

function tell(message: RoleIpcMessage): void {
  process.send?.(message);
}

export interface MasterHandle {
  url: string;
  /** Stops taking requests, lets answers in flight finish, closes run control and the store; once. */
  close(): Promise<void>;
}

/** The master role (`ackcrawl master`): started, and closed cleanly on SIGTERM or SIGINT. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(masterConfigSchema, env);
  const logger = createLogger({ name: 'master', level: config.logLevel });
  exitOnFault(logger);
  // Listened for before the start: the API answers before the schedule loop has settled the fire
  // times it claims at startup, and a signal then must wait for them and close, not kill mid-claim.
  const starting = startMaster(config, logger);
  onShutdownSignal(logger, async () => (await starting).close());
  await starting;
}

/**
 * Composition root of the master: SQL store, bootstrap admin token, run control, and the
 * management API on its listener (HTTPS when given a certificate and key).
 */
export async function startMaster(
  config: MasterConfig,
  logger: Logger,
  out: NodeJS.WritableStream = process.stdout,
): Promise<MasterHandle> {
  const tls = readTlsServerOptions(config);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const store = await openSqlStore(config.sqlUrl ?? defaultSqlStoreUrl(config.dataDir), {
    logger,
    ...(config.sqlCaFile === undefined ? {} : { caFile: config.sqlCaFile }),
  });
  const closing: (() => Promise<void>)[] = [() => store.close()];
  const closeAll = async (): Promise<void> => {
    for (const close of closing.reverse())
      await close().catch((err: unknown) => logger.warn({ err }, 'close failed'));
  };
  try {
    const admin = await bootstrapAdminToken({
      tokens: store.tokens,
      dataDir: config.dataDir,
      configured: config.adminToken,
      now: Date.now,
      newId: randomUUID,
      logger,
    });
    if (admin.source === 'created') {
      // Printed this once; afterwards it is only in the file (0600).
      out.write(`ackcrawl master: admin token (kept in ${admin.path}, mode 0600): ${admin.secret}\n`);
    }
    logger.info(
      { source: admin.source, path: admin.source === 'config' ? undefined : admin.path },
      'admin token ready',
    );
    const agentToken = masterAgentToken(config.agentToken, config.dataDir);
    logger.info(
      { source: agentToken.source, path: agentToken.source === 'config' ? undefined : agentToken.path },
      'agent credential ready',
    );
    const sweeper = startLostSweeper({
      agents: store.agents,
      lostAfterMs: config.agentLostAfterMs,
      everyMs: config.agentSweepMs,
      now: Date.now,
      logger,
    });
    closing.push(() => sweeper.close());
    const runControl = await openRunControl(
      {
        rabbitmq: config.runControl === 'rabbitmq',
        amqpUrl: config.amqpUrl,
        runControlExchange: config.runControlExchange,
        tlsCa: config.tlsCa,
      },
      logger,
    );
    closing.push(() => runControl.close());
    // One registry for the process, served at GET /metrics to a token with the read scope.
    const registry = createMetricsRegistry();
    const metrics = createMasterMetrics(registry);
    const alerting = await openAlerting(config, store, logger, metrics);
    closing.push(() => alerting.close());
    const cron = nodeCronEngine();
    const runDeps = { store, runControl, clock: { now: Date.now }, newId: randomUUID, logger };
    const timeLimits = startTimeLimits({
      runs: store.runs,
      notify: (command) => notifySchedulers(runDeps, command),
      everyMs: config.runLimitSweepMs,
      now: Date.now,
      logger: logger.child({ module: 'time-limits' }),
    });
    closing.push(() => timeLimits.close());
    if (config.runRetentionDays > 0) {
      const retention = startRunRetention({
        runs: store.runs,
        days: config.runRetentionDays,
        everyMs: config.runRetentionSweepMs,
        now: Date.now,
        logger: logger.child({ module: 'retention' }),
      });
      closing.push(() => retention.close());
      // The first pass at start: a master restarted every day still keeps its word.
      retention
        .sweep()
        .catch((err: unknown) => logger.warn({ err }, 'run retention pass failed; trying again'));
    }
    const schedules = createScheduleLoop({
      store,
      engine: cron,
      clock: { now: Date.now },
      masterId: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
      createRun: (job, runId, scheduledBy) => createRun(runDeps, job, runId, scheduledBy),
      newId: randomUUID,
      logger: logger.child({ module: 'schedules' }),
      options: {
        syncMs: config.scheduleSyncMs,
        misfireGraceMs: config.scheduleMisfireGraceMs,
        claimLeaseMs: config.scheduleClaimLeaseMs,
        maxMissed: 1_000,
      },
      metrics,
    });
    const live = config.dashboard
      ? new LiveSampler({
          store,
          clock: { now: Date.now },
          logger: logger.child({ module: 'dashboard' }),
          staleAfterMs: config.runHeartbeatMs * config.runStaleHeartbeats,
          agentLostAfterMs: config.agentLostAfterMs,
          intervalMs: config.dashboardIntervalMs,
        })
      : null;
    if (live !== null) {
      live.start();
      closing.push(() => Promise.resolve(live.stop()));
    }
    const embedded = config.schedulerOutDir;
    const schedulers = createSchedulerApi({
      apis: config.schedulerApis,
      token: config.schedulerToken ?? readTokenFile(config.dataDir),
      // `ackcrawl serve`'s scheduler, wherever it listens now (its scheduler.json, with its token).
      ...(embedded === undefined
        ? {}
        : {
            discover: () => {
              const found = runningScheduler(embedded);
              return found?.token === undefined ? null : { api: found.api, token: found.token };
            },
          }),
      logger,
    });
    const app = createMasterApp({
      ...(live === null ? {} : { dashboard: { live } }),
      store,
      runControl,
      cron,
      onScheduleChange: () => void schedules.refresh(),
      why: createSchedulerWhy(schedulers),
      hosts: createSchedulerHosts(schedulers),
      clock: { now: Date.now },
      newId: randomUUID,
      logger,
      fleet: {
        agentTokenHash: hashSecret(agentToken.token),
        nudge: createAgentNudge({ agentToken: agentToken.token, ca: readTlsCa(config), logger }),
      },
      options: {
        hosts: createHostPolicy({
          listenHost: config.masterHost,
          allowedHosts: config.allowedHosts,
          service: 'master',
        }),
        staleAfterMs: config.runHeartbeatMs * config.runStaleHeartbeats,
        maxBodyBytes: config.maxBodyBytes,
        agentLostAfterMs: config.agentLostAfterMs,
        agentHeartbeatMs: config.agentHeartbeatMs,
      },
      alerting: alerting.api,
      metrics: registry,
    });
    const server: Server = tls ? createHttpsServer(tls, app.callback()) : createHttpServer(app.callback());
    server.headersTimeout = config.headersTimeoutMs;
    server.requestTimeout = config.requestTimeoutMs;
    answerClientErrors(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.masterPort, config.masterHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    closing.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Idle keep-alive sockets now, busy ones once their answer is out.
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 2_000).unref();
        }),
    );
    const { port } = server.address() as AddressInfo;
    const host = config.masterHost.includes(':') ? `[${config.masterHost}]` : config.masterHost;
    const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
    logger.info({ url, tls: tls !== null, runControl: config.runControl }, 'master listening');
    if (listensInClear(config.masterHost, config)) {
      logger.warn(
        { masterHost: config.masterHost },
        'listening beyond loopback without TLS: bearer tokens cross the network in clear; set ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY',
      );
    }
    // After the listener: a master that cannot serve fires nothing. Closed before run control and the store.
    await schedules.start();
    closing.push(() => schedules.close());
    tell({ type: 'listening', url });
    let stopping: Promise<void> | null = null;
    return { url, close: () => (stopping ??= closeAll()) };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * The alert engine and webhook deliveries (docs/alerts.md). With RabbitMQ (run control over it)
 * the dead-letter queue's depth is read over its own connection; without, that fact is
 * unavailable and the dlq.growing rule says so.
 */
async function openAlerting(
  config: MasterConfig,
  store: Awaited<ReturnType<typeof openSqlStore>>,
  logger: Logger,
  metrics: MasterMetrics,
) {
  let amqp: { connect: () => Promise<ChannelModel>; queuePrefix: string } | undefined;
  let noAmqpReason: string | undefined;
  if (config.runControl === 'rabbitmq') {
    const connect = amqpConnector(
      'ackcrawl master alerts',
      config.tlsCa === undefined ? undefined : readTlsCa(config),
    );
    // Connected on the first evaluation, and again after RabbitMQ was lost: to the node that
    // answered last, else the next of a cluster's (round robin).
    const urls = new UrlRotation(config.amqpUrl);
    amqp = { connect: () => urls.connectAny(connect), queuePrefix: config.queuePrefix };
  } else {
    noAmqpReason = 'the master has no RabbitMQ (ACKCRAWL_RUN_CONTROL=local): no dead-letter queue to watch';
  }
  return startAlerting({
    store,
    clock: { now: Date.now },
    newId: randomUUID,
    logger,
    alertIntervalMs: config.alertIntervalMs,
    webhookIntervalMs: config.webhookIntervalMs,
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
    retry: {
      baseMs: config.webhookRetryBaseMs,
      maxMs: config.webhookRetryMaxMs,
      maxAttempts: config.webhookMaxAttempts,
    },
    ...fleetFacts(store.agents),
    ...(amqp ? { amqp } : {}),
    ...(noAmqpReason ? { noAmqpReason } : {}),
    metrics,
  });
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    const code = err instanceof AppError ? err.code : 'INTERNAL';
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`ackcrawl master: ${message}\n`);
    tell({ type: 'fatal', code, message });
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
