import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { agentCredential } from '../../shared/config/agent-token.js';
import { clientToken } from '../../shared/config/cluster-token.js';
import { loadConfig } from '../../shared/config/load.js';
import { readTlsCa, readTlsServerOptions } from '../../shared/config/tls.js';
import { ConfigError } from '../../shared/errors.js';
import { answerClientErrors } from '../../shared/http/client-errors.js';
import { createLogger, type Logger } from '../../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../../shared/lifecycle/signals.js';
import { exitOnFault } from '../../shared/lifecycle/faults.js';
import type { DesiredState } from '../../shared/protocol/agent.js';
import { createAgentApp } from './app.js';
import { agentHostPolicy } from './host-policy.js';
import { registerAgentMetrics } from './metrics.js';
import { createMetricsRegistry } from '../../shared/metrics/registry.js';
import { agentConfigSchema, type AgentConfig } from './config.js';
import { takeHostCrawlers, type HostCrawlers } from '../../shared/processes/host-crawlers.js';
import { hostFacts } from './host-facts.js';
import { MasterLink } from './master-link.js';
import { processReports } from './process-report.js';
import { trimYoungGenerationWhenIdle } from '../../shared/processes/idle-heap.js';

/** How long a starting agent waits for the master's first answer before it runs its own count. */
const MASTER_WAIT_MS = 10_000;

/**
 * Composition root of the per-host agent: keeps this host's crawler processes running and, with
 * ACKCRAWL_MASTER_URL, serves its API, registers with the master and reconciles with the
 * desired state each heartbeat answers with.
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(agentConfigSchema, env);
  // Crawlers without a token would only be refused: say what to set now, not once per crawler.
  clientToken(config.token, config.dataDir);
  const agentToken =
    config.masterUrl === undefined ? null : agentCredential(config.agentToken, config.dataDir);
  const logger = createLogger({ name: 'agent', level: config.logLevel });
  exitOnFault(logger);
  const crawlers = await takeHostCrawlers(config, env, logger);
  // An agent mostly waits on its crawler processes once it has started them (under `ackcrawl
  // serve` too): the young generation its start-up grew goes back.
  trimYoungGenerationWhenIdle();
  if (config.masterUrl === undefined || agentToken === null) {
    onShutdownSignal(logger, () => crawlers.stop(), crawlers.stopTimeoutMs + 5_000);
    crawlers.manager.scale(config.processes);
    logger.info({ processes: config.processes, renderProcesses: config.renderProcesses }, 'agent running');
    return;
  }
  await runWithMaster(config, { agentToken, crawlers, logger });
}

async function runWithMaster(
  config: Readonly<AgentConfig>,
  deps: { agentToken: string; crawlers: HostCrawlers; logger: Logger },
): Promise<void> {
  const { agentToken, crawlers, logger } = deps;
  const { agentId, manager } = crawlers;
  const masterUrl = config.masterUrl as string;
  let desired: DesiredState | null = null;
  let link: MasterLink | null = null;
  // One registry for the process: its own numbers and its crawlers', at GET /metrics.
  const registry = createMetricsRegistry();
  registerAgentMetrics(registry, () => processReports(manager));
  const app = createAgentApp({
    agentId,
    token: agentToken,
    hosts: agentHostPolicy(config),
    logger,
    processes: () => processReports(manager),
    desired: () => desired,
    sync: () => link?.sync(),
    metrics: registry,
  });
  const tls = readTlsServerOptions(config);
  const server: Server = tls ? createHttpsServer(tls, app.callback()) : createHttpServer(app.callback());
  answerClientErrors(server);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(config.agentPort, config.agentHost, () => {
      server.off('error', fail);
      done();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = config.agentHost.includes(':') ? `[${config.agentHost}]` : config.agentHost;
  const url = config.agentUrl ?? `${tls ? 'https' : 'http'}://${host}:${port}`;
  link = new MasterLink({
    masterUrl,
    token: agentToken,
    ca: readTlsCa(config),
    agentId,
    heartbeatMs: config.agentHeartbeatMs,
    registration: () => ({
      name: config.agentName ?? agentId,
      hostname: hostname().slice(0, 200),
      url,
      facts: hostFacts(config.dataDir),
      processes: config.processes,
    }),
    heartbeat: () => ({ facts: hostFacts(config.dataDir), processes: processReports(manager) }),
    onDesired: (next) => {
      desired = next;
      manager.reconcile(next);
    },
    logger,
  });
  const running = link;
  onShutdownSignal(
    logger,
    async () => {
      // Heartbeats go on while the crawlers drain, so the master sees them stopping.
      await crawlers.stop();
      await running.close();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    },
    crawlers.stopTimeoutMs + 5_000,
  );
  // The master's answer says how many processes run; if it does not answer soon, the configured
  // count runs meanwhile and is reconciled once it does.
  running.start();
  setTimeout(() => {
    if (desired === null) {
      logger.warn(
        { processes: config.processes },
        'the master has not answered; running the configured processes',
      );
      manager.scale(config.processes);
    }
  }, MASTER_WAIT_MS).unref();
  logger.info({ agentId, url, masterUrl }, 'agent running; registering with the master');
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`ackcrawl agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
