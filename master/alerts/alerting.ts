import type { ChannelModel } from 'amqplib';
import { createAgents } from '../../shared/net/address-guard.js';
import type { Logger } from '../../shared/logger.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { AlertingDeps } from '../api/deps.js';
import { createDeliverer } from '../webhooks/deliverer.js';
import { startDeliveryLoop } from '../webhooks/delivery-loop.js';
import { createWebhookSender, type WebhookSender } from '../webhooks/sender.js';
import { deadLetterDepthReader } from './dead-letter-depth.js';
import { createAlertEngine, startAlertLoop } from './engine.js';
import { createStoreFacts, type CrashLoop, type LostAgent } from './facts.js';
import type { MasterMetrics } from '../metrics/master-metrics.js';

export interface AlertingOptions {
  store: SqlStore;
  clock: { now(): number };
  newId: () => string;
  logger: Logger;
  alertIntervalMs: number;
  webhookIntervalMs: number;
  allowPrivate: boolean;
  timeoutMs: number;
  retry: { baseMs: number; maxMs: number; maxAttempts: number };
  /** An open AMQP connection for the dead-letter depth; absent: no RabbitMQ, the fact is unavailable. */
  /** RabbitMQ for the dead-letter depth: how to connect (again after a loss) and the queues' prefix. */
  amqp?: { connect: () => Promise<ChannelModel>; queuePrefix: string };
  /** Why there is no AMQP connection, for the dlq.growing rule's status. */
  noAmqpReason?: string;
  /** The fleet's facts (store.agents): to be wired by the fleet work. */
  lostAgents?: () => Promise<LostAgent[]>;
  crashLoops?: () => Promise<CrashLoop[]>;
  /** Tests pass their own sender and random. */
  send?: WebhookSender;
  random?: () => number;
  /** Counts webhook deliveries by result (master/metrics); absent: not counted. */
  metrics?: Pick<MasterMetrics, 'delivery'>;
}

export interface Alerting {
  /** For createMasterApp. */
  api: AlertingDeps;
  engine: ReturnType<typeof createAlertEngine>;
  /** Run one pass now (tests, and nothing else needs to wait for the interval). */
  evaluateNow(): Promise<void>;
  deliverNow(): Promise<number>;
  close(): Promise<void>;
}

/** The master's alerting: the engine on its loop, the delivery loop, and what the API needs. */
export function startAlerting(o: AlertingOptions): Alerting {
  const log = o.logger.child({ module: 'alerts' });
  const dlq = o.amqp
    ? deadLetterDepthReader({ connect: o.amqp.connect, queuePrefix: o.amqp.queuePrefix, logger: log })
    : null;
  const facts = createStoreFacts({
    store: o.store,
    ...(o.lostAgents ? { lostAgents: o.lostAgents } : {}),
    ...(o.crashLoops ? { crashLoops: o.crashLoops } : {}),
    ...(dlq ? { deadLetterDepth: () => dlq.read() } : {}),
    ...(o.noAmqpReason ? { noDeadLetterReason: o.noAmqpReason } : {}),
  });
  const engine = createAlertEngine({ store: o.store, facts, clock: o.clock, newId: o.newId, logger: log });
  const agents = createAgents({ allowPrivate: o.allowPrivate, maxSockets: 16 });
  const send =
    o.send ?? createWebhookSender({ agents, timeoutMs: o.timeoutMs, userAgent: 'ackcrawl-webhooks/1' });
  const deliverer = createDeliverer({
    store: o.store,
    send,
    schedule: o.retry,
    clock: o.clock,
    logger: log,
    leaseMs: o.timeoutMs * 3,
    ...(o.random ? { random: o.random } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
  });
  const alertLoop = startAlertLoop(engine, { intervalMs: o.alertIntervalMs, logger: log });
  const deliveryLoop = startDeliveryLoop({
    store: o.store,
    deliverer,
    clock: o.clock,
    intervalMs: o.webhookIntervalMs,
    logger: log,
  });
  let closing: Promise<void> | null = null;
  return {
    api: { deliverer, status: (id) => engine.status(id), allowPrivateWebhooks: o.allowPrivate },
    engine,
    evaluateNow: () => alertLoop.runOnce(),
    deliverNow: () => deliveryLoop.runOnce(),
    close: () =>
      (closing ??= (async () => {
        await alertLoop.close();
        await deliveryLoop.close();
        await dlq?.close();
        agents.http.destroy();
        agents.https.destroy();
      })()),
  };
}
