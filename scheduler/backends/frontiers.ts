import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openRabbitFrontier } from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { amqpConnector } from '../../shared/config/amqp-connect.js';
import { readTlsCa } from '../../shared/config/tls.js';
import type { Logger } from '../../shared/logger.js';
import type { SeenRepository } from '../../shared/ports/sql-store.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { SchedulerConfig } from '../config.js';
import { schedulerIdFor } from '../runs/scheduler-id.js';
import type { PublishTimer } from '../../shared/metrics/publish-latency.js';

export async function openFrontier(
  config: SchedulerConfig,
  logger: Logger,
  publishTimer?: PublishTimer,
  sharedSeen?: SeenRepository,
): Promise<Frontier> {
  if (config.frontier === 'sqlite') {
    // Commits need not wait for the disk when the record files are fdatasynced before each settle:
    // a settle lost to a power cut is replayed from them at start (FileSink.recover), links included.
    const frontier = openSqliteFrontier({
      path: join(config.outDir, 'frontier.sqlite'),
      leaseMs: config.leaseMs,
      durability: config.sink === 'file' ? 'normal' : 'full',
      // Runs a master ended (`ackcrawl serve`) leave the file; the embedded crawl's never end so.
      sweepRetired: logger.child({ module: 'frontier-sweeper' }),
    });
    // This scheduler is the file's only consumer: leases of a crashed run are dead.
    const released = frontier.releaseAllLeases();
    if (released > 0) logger.info({ released }, 'resuming: leases of the previous run handed back');
    return frontier;
  }
  mkdirSync(config.dataDir, { recursive: true });
  return openRabbitFrontier({
    url: config.amqpUrl,
    // amqps:// with ACKCRAWL_TLS_CA: the broker's certificate is checked against those CAs too.
    ...(config.tlsCa === undefined ? {} : { connect: amqpConnector('ackcrawl frontier', readTlsCa(config)) }),
    queuePrefix: config.queuePrefix,
    ledgerPath: join(config.dataDir, `${config.queuePrefix}.ledger.sqlite`),
    // Prefetch bounds every unacked delivery: the dispatcher's buffer, tasks with crawlers and
    // outcomes being settled; room for all three keeps the buffer full while batches settle.
    prefetch: config.bufferSize * 3,
    leaseMs: config.leaseMs,
    // Hosts split among schedulers: the id is this scheduler's, so a restart wins the same shards.
    shards: config.shards,
    memberId: schedulerIdFor(config.schedulerId, config.dataDir),
    ...(sharedSeen ? { sharedSeen } : {}),
    logger: logger.child({ module: 'rabbitmq' }),
    ...(publishTimer ? { publishTimer } : {}),
  });
}
