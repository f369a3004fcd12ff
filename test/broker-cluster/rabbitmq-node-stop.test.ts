import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { brokerClusters, type ClusterNode } from '../helpers/service-control.js';
import { waitFor } from '../helpers/wait-for.js';
import { crawlThroughFault, PAGES } from './fault-kit.js';

interface QueueRow {
  name: string;
  leader: string;
  members: string[];
}

/** The run's ready queues on the cluster: their leader and members. */
async function runQueues(prefix: string): Promise<QueueRow[]> {
  const out = await brokerClusters.rabbitmqctl(
    'list_queues',
    'name',
    'leader',
    'members',
    '--formatter',
    'json',
  );
  return (JSON.parse(out) as QueueRow[]).filter((q) => q.name.startsWith(`${prefix}.run.`));
}

/** The AMQP ports (5681-5683: the node) of the connections named `name` (client property connection_name). */
async function connectionPorts(name: string): Promise<number[]> {
  const out = await brokerClusters.rabbitmqctl(
    'list_connections',
    'port',
    'client_properties',
    '--formatter',
    'json',
  );
  const rows = JSON.parse(out) as { port: number; client_properties: [string, string, unknown][] }[];
  return rows
    .filter((row) =>
      row.client_properties.some(([key, , value]) => key === 'connection_name' && value === name),
    )
    .map((row) => row.port);
}

/** The node that leads most of the rows' queues (ackc2@localhost is rabbitmq-2). */
function leaderOf(rows: readonly QueueRow[]): { node: string; service: ClusterNode } {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.leader, (counts.get(row.leader) ?? 0) + 1);
  const [node] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
  const n = /^ackc([1-3])@/.exec(node ?? '')?.[1];
  assert.ok(node !== undefined && n !== undefined, `a leader among ${JSON.stringify(rows)}`);
  return { node, service: `rabbitmq-${n}` as ClusterNode };
}

describe(`a ${PAGES}-page cluster crawl on a 3-node RabbitMQ cluster`, () => {
  before(async () => {
    await brokerClusters.requireUp('rabbitmq', 'kafka');
  });

  test('the node leading the run queues stops mid-crawl: nothing lost, duplicates under 0.5%, no restart', async () => {
    await crawlThroughFault(
      'RabbitMQ queue leader stopped',
      async ({ cluster }) => {
        const rows = await runQueues(cluster.prefix);
        assert.ok(rows.length > 0, `the run's queues exist (prefix ${cluster.prefix})`);
        for (const row of rows) {
          assert.equal(
            row.members.length,
            3,
            `${row.name} has a member on every node: ${row.members.join(' ')}`,
          );
        }
        const leader = leaderOf(rows);
        const leaderPort = 5680 + Number(leader.service.slice(-1));
        const frontierBefore = await connectionPorts('ackcrawl frontier');
        assert.equal(frontierBefore.length, 1, `one frontier connection: ${frontierBefore.join(' ')}`);
        await brokerClusters.stop(leader.service);
        // The queues elect a leader among the two nodes left.
        const after = await runQueues(cluster.prefix);
        assert.ok(
          after.every((q) => q.leader !== leader.node),
          `every run queue led by another node: ${after.map((q) => q.leader).join(' ')}`,
        );
        // The scheduler's frontier and run control are on the nodes left (moved, if they were on it).
        for (const name of ['ackcrawl frontier', 'ackcrawl run-control']) {
          await waitFor(
            async () => {
              const ports = await connectionPorts(name);
              return ports.length > 0 && !ports.includes(leaderPort);
            },
            { timeoutMs: 30_000, intervalMs: 500, message: `${name} connected to a node left` },
          );
        }
        const frontierAfter = await connectionPorts('ackcrawl frontier');
        return `${leader.node} stopped, frontier on :${frontierBefore.join(',')} then :${frontierAfter.join(',')}, leaders now ${[...new Set(after.map((q) => q.leader))].join(' ')}`;
      },
      () => brokerClusters.up('rabbitmq'),
    );
  });
});
