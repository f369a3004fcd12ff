import { InvalidInputError } from '../../../errors.js';
import type { SeenRepository } from '../../../ports/sql-store.js';
import type { Logger } from '../../../logger.js';
import { assertLeaseMs } from '../task-input.js';
import type { Connect } from './broker-link.js';
import type { BrokerUrls } from './broker-urls.js';
import { randomBytes } from 'node:crypto';
import { MAX_SHARDS } from './shards.js';
import { checkBuckets, DEFAULT_RETRY_DELAY_BUCKETS_MS } from './topology.js';

/**
 * RabbitMQ's consumer ack timeout is 30 min by default: a delivery unacked for longer closes the
 * channel (and makes every lease on it stale). Leases stay well inside it, and any delivery held
 * this long, leased or buffered, is handed back first.
 */
import type { PublishTimer } from '../../../metrics/publish-latency.js';
export const MAX_LEASE_MS = 25 * 60_000;
export const MAX_HOLD_MS = 25 * 60_000;

export interface RabbitFrontierOptions {
  /**
   * amqp://user:pass@host:port/vhost, or the URLs of every node of a RabbitMQ cluster: the link
   * moves to the next one when a node cannot be reached or the connection to it is lost.
   */
  url: BrokerUrls;
  /** Queue names start with it (1-180 characters: a run's queue names must fit in 255); one frontier process (and one ledger) per prefix. 'ackcrawl' unless given. */
  queuePrefix?: string;
  /** The ledger file (seen-set, counters, checkpoint); created when missing. */
  ledgerPath: string;
  /**
   * Unacked deliveries this process may hold (buffered + leased + being settled) from each level
   * queue of each active run: quorum queues have no channel-wide prefetch, so it is per consumer.
   * With every task on one level (one run, FIFO) it bounds them all, as before levels.
   */
  prefetch: number;
  /** Default lease duration; 60 s unless given, at most MAX_LEASE_MS. */
  leaseMs?: number;
  /** Lease expiry and retry due times read it; Date.now unless given (tests inject a fake). */
  clock?: () => number;
  logger: Logger;
  /** See DEFAULT_RETRY_DELAY_BUCKETS_MS. */
  retryDelayBucketsMs?: readonly number[];
  /** Opens the AMQP connection; amqplib's connect unless given (tests inject one to cut it). */
  connect?: Connect;
  /** A publish batch not confirmed by then drops the link; 30 s unless given. */
  confirmTimeoutMs?: number;
  /** How long stats() may reuse queue counts this process did not change; 200 ms unless given. */
  statsCacheMs?: number;
  /** Times each publish until its confirms (`ackcrawl_rabbitmq_publish_duration_seconds`). */
  publishTimer?: PublishTimer;
  /**
   * Shards the hosts are split into among the schedulers of the prefix, 1..MAX_SHARDS (see
   * shards.ts); 1 (not split: every scheduler consumes every host) unless given. Every scheduler
   * of a prefix needs the same number.
   */
  shards?: number;
  /** This scheduler among those of the prefix (its schedulerId): stable, so it wins the same shards after a restart. Random unless given. */
  memberId?: string;
  /** How often the schedulers of a sharded prefix beat; 1 s unless given. */
  shardHeartbeatMs?: number;
  /**
   * With shards: the SQL store's seen-set, shared by every scheduler of the prefix, so a URL
   * found through two schedulers is published and counted once, and one of a shard that moved is
   * not fetched again by its new owner. Without it (or without shards) each ledger dedups alone.
   */
  sharedSeen?: SeenRepository;
}

export interface ResolvedOptions {
  prefix: string;
  shards: number;
  memberId: string;
  shardHeartbeatMs: number;
  prefetch: number;
  leaseMs: number;
  buckets: number[];
  clock: () => number;
}

/** Checks every option that can be wrong before anything is opened. */
export function resolveOptions(options: RabbitFrontierOptions): ResolvedOptions {
  const leaseMs = options.leaseMs ?? 60_000;
  checkLeaseMs(leaseMs);
  const { prefetch } = options;
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > 65_535) {
    throw new InvalidInputError(
      'FRONTIER_BAD_PREFETCH',
      `prefetch must be a whole number in 1..65535, got ${prefetch}`,
    );
  }
  const prefix = options.queuePrefix ?? 'ackcrawl';
  if (!/^[A-Za-z0-9_.:-]{1,180}$/.test(prefix)) {
    throw new InvalidInputError(
      'FRONTIER_BAD_PREFIX',
      `queuePrefix must be 1-180 of [A-Za-z0-9_.:-], got ${prefix}`,
    );
  }
  const shards = options.shards ?? 1;
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
    throw new InvalidInputError(
      'FRONTIER_BAD_SHARDS',
      `shards must be a whole number in 1..${MAX_SHARDS}, got ${shards}`,
    );
  }
  const memberId = options.memberId ?? randomBytes(8).toString('hex');
  if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(memberId)) {
    throw new InvalidInputError(
      'FRONTIER_BAD_MEMBER_ID',
      `the scheduler id must be 1-128 of [A-Za-z0-9_.:-], got ${memberId}`,
    );
  }
  const shardHeartbeatMs = options.shardHeartbeatMs ?? 1_000;
  if (!Number.isInteger(shardHeartbeatMs) || shardHeartbeatMs < 50 || shardHeartbeatMs > 60_000) {
    throw new InvalidInputError(
      'FRONTIER_BAD_HEARTBEAT',
      `shardHeartbeatMs must be whole milliseconds in 50..60000, got ${shardHeartbeatMs}`,
    );
  }
  return {
    prefix,
    shards,
    memberId,
    shardHeartbeatMs,
    prefetch,
    leaseMs,
    buckets: checkBuckets(options.retryDelayBucketsMs ?? DEFAULT_RETRY_DELAY_BUCKETS_MS),
    clock: options.clock ?? Date.now,
  };
}

/** A positive lease duration within MAX_LEASE_MS. */
export function checkLeaseMs(leaseMs: number): void {
  assertLeaseMs(leaseMs);
  if (leaseMs > MAX_LEASE_MS) {
    throw new InvalidInputError(
      'FRONTIER_BAD_LEASE_MS',
      `leaseMs must be at most ${MAX_LEASE_MS} (RabbitMQ closes a channel that holds a delivery 30 min), got ${leaseMs}`,
    );
  }
}
