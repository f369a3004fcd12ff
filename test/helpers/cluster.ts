import { DEFAULT_RUN_ID } from '../../shared/protocol/task.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CLI, startCli, type CliRun } from './cli.js';
import { freePort } from './ports.js';
import { crawlerPids } from './process-tree.js';
import { waitFor } from './wait-for.js';
import {
  allExchangeNames,
  allQueueNames,
  DEFAULT_RETRY_DELAY_BUCKETS_MS,
} from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { deleteTopic } from './kafka-topic.js';
import { AMQP_URLS, rabbitAdmin } from './rabbitmq.js';
import { KAFKA_BROKERS } from './topic-records.js';

export interface Cluster {
  schedulerUrl: string;
  token: string;
  topic: string;
  prefix: string;
  env: NodeJS.ProcessEnv;
  scheduler(): ChildProcess;
  /** What the scheduler wrote to stderr (its JSON log lines), with `captureSchedulerLog`. */
  schedulerLog(): string;
  /** SIGKILL the scheduler and start it again with the same settings. */
  killScheduler(): Promise<void>;
  startScheduler(): Promise<void>;
  crawlers(): number[];
  /** The agents' PIDs (they start and watch the crawler processes). */
  agents(): number[];
  /** The brokers every role of this cluster uses. */
  brokers: ClusterBrokers;
  /** Runs first when the cluster stops (e.g. to kill a client still following it). */
  onStop(hook: () => void): void;
  /**
   * `ackcrawl crawl --cluster <seed> --allow-private --json` with this politeness, following the
   * crawl to its end; killed when the cluster stops, so a failed test never leaves it polling.
   */
  crawl(seed: string, politeness: { hostConcurrency: number; hostDelayMs: number }): CliRun;
  stop(): Promise<void>;
}

/** Where the roles find RabbitMQ and Kafka: a cluster's nodes, or the single-node services. */
export interface ClusterBrokers {
  amqpUrls: readonly string[];
  kafkaBrokers: readonly string[];
  /** Replicas of the page topic when the scheduler creates it (ACKCRAWL_KAFKA_REPLICATION_FACTOR). */
  kafkaReplicationFactor?: number;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A real cluster on the services of scripts/services.sh: one scheduler (RabbitMQ frontier with a
 * unique queue prefix, Kafka sink with a unique topic) and `agents` agents of `processes` crawler
 * processes each, all as separate processes started through the `ackcrawl` CLI.
 */
export async function startCluster(options: {
  agents: number;
  processes: number;
  concurrency?: number;
  /** Render-capable crawler processes per agent, besides `processes`. */
  renderProcesses?: number;
  /** More settings for every role (ACKCRAWL_LEASE_MS, a test's own ACKCRAWL_S3_BUCKET, ...), over the defaults below. */
  env?: NodeJS.ProcessEnv;
  /** RabbitMQ and Kafka; those of ACKCRAWL_AMQP_URL and ACKCRAWL_KAFKA_BROKERS (the services') unless given. */
  brokers?: ClusterBrokers;
  /** The scheduler's own ACKCRAWL_DATA_DIR (its ledger), apart from the agents' (a temp dir of the test's). */
  schedulerDataDir?: string;
  /** Keep the scheduler's stderr for the test (`schedulerLog()`) instead of passing it through. */
  captureSchedulerLog?: boolean;
}): Promise<Cluster> {
  const brokers: ClusterBrokers = options.brokers ?? { amqpUrls: AMQP_URLS, kafkaBrokers: KAFKA_BROKERS };
  const id = randomUUID().slice(0, 8);
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-cluster-'));
  const token = `test-token-${randomUUID()}`;
  const prefix = `test-${id}`;
  const topic = `test-${id}.pages`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ACKCRAWL_TOKEN: token,
    ACKCRAWL_LISTEN_PORT: String(port),
    ACKCRAWL_SCHEDULER_URL: `ws://127.0.0.1:${port}/crawlers`,
    ACKCRAWL_DATA_DIR: dataDir,
    ACKCRAWL_QUEUE_PREFIX: prefix,
    ACKCRAWL_KAFKA_TOPIC: topic,
    ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'error',
    ACKCRAWL_CONCURRENCY: String(options.concurrency ?? 16),
    ACKCRAWL_PROCESSES: String(options.processes),
    ACKCRAWL_RENDER_PROCESSES: String(options.renderProcesses ?? 0),
    ACKCRAWL_HEARTBEAT_MS: '1000',
    ACKCRAWL_AMQP_URL: brokers.amqpUrls.join(','),
    ACKCRAWL_KAFKA_BROKERS: brokers.kafkaBrokers.join(','),
    ...(brokers.kafkaReplicationFactor === undefined
      ? {}
      : { ACKCRAWL_KAFKA_REPLICATION_FACTOR: String(brokers.kafkaReplicationFactor) }),
    ...options.env,
  };
  let scheduler: ChildProcess | null = null;
  const stopHooks: (() => void)[] = [];
  const agents: ChildProcess[] = [];
  let schedulerLog = '';
  const schedulerEnv =
    options.schedulerDataDir === undefined ? env : { ...env, ACKCRAWL_DATA_DIR: options.schedulerDataDir };
  const startScheduler = async (): Promise<void> => {
    const child = spawn(process.execPath, [CLI, 'scheduler'], {
      env: schedulerEnv,
      stdio: ['ignore', 'ignore', options.captureSchedulerLog === true ? 'pipe' : 'inherit'],
    });
    child.stderr?.on('data', (chunk: Buffer) => (schedulerLog += chunk.toString()));
    scheduler = child;
    await waitFor(
      async () => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/health`);
          return res.ok;
        } catch {
          return false;
        }
      },
      { timeoutMs: 60_000, message: 'scheduler answering /health' },
    );
  };
  await startScheduler();
  for (let i = 0; i < options.agents; i++) {
    // One id each: agents sharing an id and a data dir are refused (AGENT_ID_IN_USE).
    const agentEnv = { ...env, ACKCRAWL_AGENT_ID: `${prefix}-agent-${i}` };
    agents.push(
      spawn(process.execPath, [CLI, 'agent'], { env: agentEnv, stdio: ['ignore', 'ignore', 'inherit'] }),
    );
  }
  const crawlers = (): number[] => agents.flatMap((agent) => crawlerPids(agent.pid as number));
  const perAgent = options.processes + (options.renderProcesses ?? 0);
  await waitFor(() => crawlers().length === options.agents * perAgent, {
    timeoutMs: 30_000,
    message: 'every crawler process started',
  });
  return {
    schedulerUrl: env.ACKCRAWL_SCHEDULER_URL as string,
    token,
    topic,
    prefix,
    env,
    scheduler: () => scheduler as ChildProcess,
    schedulerLog: () => schedulerLog,
    startScheduler,
    killScheduler: async () => {
      const current = scheduler as ChildProcess;
      current.kill('SIGKILL');
      await exited(current);
      await startScheduler();
    },
    crawlers,
    agents: () => agents.map((agent) => agent.pid as number),
    brokers,
    onStop: (hook) => stopHooks.push(hook),
    crawl: (seed, { hostConcurrency, hostDelayMs }) => {
      const run = startCli(
        [
          'crawl',
          '--cluster',
          seed,
          '--allow-private',
          '--host-concurrency',
          String(hostConcurrency),
          '--host-delay',
          String(hostDelayMs),
          '--json',
        ],
        env,
      );
      stopHooks.push(() => {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
      });
      return run;
    },
    stop: async () => {
      for (const hook of stopHooks) hook();
      for (const agent of agents) agent.kill('SIGTERM');
      await Promise.all(agents.map(exited));
      const current = scheduler as ChildProcess | null;
      current?.kill('SIGTERM');
      if (current) await exited(current);
      rmSync(dataDir, { recursive: true, force: true });
      const admin = await rabbitAdmin(brokers.amqpUrls);
      await admin.deleteQueuesAndClose(
        allQueueNames(prefix, DEFAULT_RETRY_DELAY_BUCKETS_MS, [DEFAULT_RUN_ID]),
        allExchangeNames(prefix, DEFAULT_RETRY_DELAY_BUCKETS_MS),
      );
      await deleteTopic(topic, brokers.kafkaBrokers);
    },
  };
}
