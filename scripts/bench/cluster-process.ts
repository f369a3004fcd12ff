import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KafkaCompression } from '../../shared/adapters/page-sink/kafka-compression.js';
import { ackcrawlCli } from '../paths.js';
import { deleteQueues, deleteTopic } from './cluster-resources.js';

export interface BenchCluster {
  /** The environment every role and the crawl CLI of this cluster run with. */
  env: NodeJS.ProcessEnv;
  prefix: string;
  topic: string;
  /** Scheduler and agent: the roots of the cluster's process trees. */
  pids: number[];
  /**
   * SIGTERM the agent and the scheduler, SIGKILL what is left after the deadline, then removes the
   * data dir, the queues and the topic. Problems removing them are reported on stderr, not thrown.
   */
  stop(): Promise<void>;
}

export interface BenchClusterOptions {
  processes: number;
  concurrency: number;
  /** How the scheduler compresses its record batches (ACKCRAWL_KAFKA_COMPRESSION). */
  kafkaCompression: KafkaCompression;
  /** Run the scheduler with `--cpu-prof` into this folder (written when it exits on SIGTERM). */
  profileDir?: string | undefined;
  verbose: boolean;
  readyTimeoutMs?: number;
  stopDeadlineMs?: number;
}

/**
 * One scheduler and one agent of `processes` crawler processes, started through the ackcrawl CLI
 * on the services of scripts/services.sh, with names of their own (queue prefix, topic, data dir,
 * port, token), so a bench run never meets another cluster's queues or topic. Resolves once every
 * crawler holds a connection to the scheduler.
 */
export async function startBenchCluster(o: BenchClusterOptions): Promise<BenchCluster> {
  const id = randomBytes(4).toString('hex');
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-bench-cluster-'));
  const prefix = `bench-${id}`;
  const topic = `bench-${id}.pages`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ACKCRAWL_QUEUE_PREFIX: prefix,
    ACKCRAWL_KAFKA_TOPIC: topic,
    ACKCRAWL_DATA_DIR: dataDir,
    ACKCRAWL_TOKEN: randomBytes(24).toString('hex'),
    ACKCRAWL_LISTEN_PORT: String(port),
    ACKCRAWL_SCHEDULER_URL: `ws://127.0.0.1:${port}/crawlers`,
    ACKCRAWL_LOG_LEVEL: 'warn',
    ACKCRAWL_CONCURRENCY: String(o.concurrency),
    ACKCRAWL_KAFKA_COMPRESSION: o.kafkaCompression,
  };
  const profile = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [];
  const children: ChildProcess[] = [];
  const start = (args: string[]): ChildProcess => {
    const child = spawn(process.execPath, args, {
      env,
      stdio: ['ignore', 'ignore', o.verbose ? 'inherit' : 'pipe'],
    });
    keepStderrTail(child);
    children.push(child);
    return child;
  };
  // Agent first, scheduler last on the way out: crawlers hand back their work to a live scheduler.
  const stop = async (): Promise<void> => {
    for (const child of [...children].reverse()) await stopChild(child, o.stopDeadlineMs ?? 15_000);
    rmSync(dataDir, { recursive: true, force: true });
    const report = (what: string) => (err: unknown) =>
      void process.stderr.write(`could not delete ${what}: ${String(err)}\n`);
    await deleteQueues(prefix).catch(report(`the queues ${prefix}.*`));
    await deleteTopic(topic).catch(report(`the topic ${topic}`));
  };
  try {
    const scheduler = start([...profile, ackcrawlCli, 'scheduler']);
    await waitFor(
      () => healthy(port),
      o.readyTimeoutMs ?? 60_000,
      'the scheduler answering /health',
      scheduler,
    );
    const agent = start([ackcrawlCli, 'agent', '--processes', String(o.processes)]);
    await waitFor(
      () => establishedTo(port) >= o.processes,
      o.readyTimeoutMs ?? 60_000,
      `${o.processes} crawler processes connected`,
      agent,
    );
    return { env, prefix, topic, pids: [scheduler.pid as number, agent.pid as number], stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const stderrTails = new WeakMap<ChildProcess, string>();

function keepStderrTail(child: ChildProcess): void {
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderrTails.set(child, ((stderrTails.get(child) ?? '') + chunk).slice(-1_000));
  });
}

/** SIGTERM, then SIGKILL once the deadline passes; resolves when the process has exited. */
async function stopChild(child: ChildProcess, deadlineMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  await exited;
  clearTimeout(timer);
}

async function healthy(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Established TCP connections whose local end is 127.0.0.1:port (one per connected crawler). */
function establishedTo(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const cols = line.trim().split(/\s+/);
      return cols[1] === local && cols[3] === '01';
    }).length;
}

async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  child: ChildProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = stderrTails.get(child)?.trim();
      const said = tail ? `; its stderr ends: ${tail}` : '';
      throw new Error(
        `waiting for ${what}: the process exited (${child.signalCode ?? child.exitCode})${said}`,
      );
    }
    if (Date.now() > deadline) throw new Error(`waiting for ${what}: not after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A loopback port nobody listens on (bound, read, released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
