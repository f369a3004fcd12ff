import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));

/** `scripts/services.sh up|down <service>`: for fault tests that stop a real broker. */
export async function serviceControl(
  action: 'up' | 'down',
  service: 'rabbitmq' | 'kafka' | 'minio' | 'postgres',
): Promise<void> {
  await run('bash', [SCRIPT, action, service], { timeout: 300_000 });
}

/** `rabbitmqctl ARGS` against the single RabbitMQ node of `scripts/services.sh up`; its stdout. */
export async function rabbitmqctl(...args: string[]): Promise<string> {
  return (await run('bash', [SCRIPT, 'rabbitmqctl', ...args], { timeout: 60_000 })).stdout;
}

/**
 * RabbitMQ's disk alarm on the node of `up`: a free-space limit far above what the disk has sets
 * it off at once; the node's own limit (0.05 GB, as services.sh starts it) clears it. A test that
 * raises it clears it in a `finally`, or every test after it is blocked.
 */
export const rabbitDiskAlarm = {
  raise: async (): Promise<void> => void (await rabbitmqctl('set_disk_free_limit', '100000GB')),
  clear: async (): Promise<void> => void (await rabbitmqctl('set_disk_free_limit', '50MB')),
};

/** The broker clusters of `scripts/services.sh cluster-up` (its ports; see the script). */
export const RABBITMQ_CLUSTER_URLS: readonly string[] = [5681, 5682, 5683].map(
  (port) => `amqp://guest:guest@127.0.0.1:${port}`,
);
export const KAFKA_CLUSTER_BROKERS: readonly string[] = [9192, 9193, 9194].map((port) => `127.0.0.1:${port}`);

export type ClusterBroker = 'rabbitmq' | 'kafka';
/** One node of a broker cluster, as services.sh names it: rabbitmq-1..3, kafka-1..3 (Kafka node id N). */
export type ClusterNode = `${ClusterBroker}-${1 | 2 | 3}`;

async function services(args: string[]): Promise<string> {
  const { stdout } = await run('bash', [SCRIPT, ...args], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The broker clusters of scripts/services.sh, for the fault tests of test/broker-cluster. */
export const brokerClusters = {
  /** Fails, saying how to start them, unless every node of these clusters is up. */
  async requireUp(...brokers: ClusterBroker[]): Promise<void> {
    try {
      await services(['cluster-status', ...brokers]);
    } catch (err) {
      const out = (err as { stdout?: string }).stdout ?? '';
      throw new Error(
        `broker cluster not up:\n${out}run: bash scripts/services.sh cluster-up ${brokers.join(' ')}`,
        {
          cause: err,
        },
      );
    }
  },
  /** Starts what is not running (a stopped or killed node) and waits until the cluster is whole. */
  async up(...brokers: ClusterBroker[]): Promise<void> {
    await services(['cluster-up', ...brokers]);
  },
  /** Stops one node gracefully (SIGTERM to the node, as a planned shutdown or a host going down). */
  async stop(node: ClusterNode): Promise<void> {
    await services(['cluster-stop', node]);
  },
  async pid(node: ClusterNode): Promise<number> {
    return Number((await services(['cluster-pid', node])).trim());
  },
  /** `rabbitmqctl ARGS` against a running node of the RabbitMQ cluster; its stdout. */
  async rabbitmqctl(...args: string[]): Promise<string> {
    return services(['cluster-rabbitmqctl', ...args]);
  },
};
