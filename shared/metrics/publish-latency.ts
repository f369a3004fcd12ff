import { Histogram, type Registry } from 'prom-client';

/** How a publish ended: confirmed by the broker, or failed (refused, timed out, link lost). */
export type PublishResult = 'ok' | 'error';

/** Told the duration of each publish to a broker; adapters take one as an optional dependency. */
export interface PublishTimer {
  observe(seconds: number, result: PublishResult): void;
}

/** Seconds: from a local broker's millisecond round trips to a send held for its 30 s deadline. */
export const PUBLISH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * `ackcrawl_kafka_publish_duration_seconds` (one producer send, with its acks) and
 * `ackcrawl_rabbitmq_publish_duration_seconds` (one batch published until every publisher
 * confirm), by result. The label children are made once, so an observation allocates nothing.
 */
export function createPublishTimers(registry: Registry): { kafka: PublishTimer; rabbitmq: PublishTimer } {
  const timer = (broker: string, help: string): PublishTimer => {
    const histogram = new Histogram({
      name: `ackcrawl_${broker}_publish_duration_seconds`,
      help,
      labelNames: ['result'] as const,
      buckets: PUBLISH_BUCKETS,
      registers: [registry],
    });
    // Both results are shown from the start (a series that appears late hides its first rate).
    histogram.zero({ result: 'ok' });
    histogram.zero({ result: 'error' });
    const children = { ok: histogram.labels('ok'), error: histogram.labels('error') };
    return { observe: (seconds, result) => children[result].observe(seconds) };
  };
  return {
    kafka: timer(
      'kafka',
      'Kafka producer sends (one batch of page records until the broker acks it), seconds',
    ),
    rabbitmq: timer(
      'rabbitmq',
      'RabbitMQ publishes (one batch of frontier messages until every publisher confirm), seconds',
    ),
  };
}

/** Seconds since `start` (a `performance.now()` reading). */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}
