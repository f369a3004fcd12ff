import { createLocalRunControl } from '../adapters/run-control/local-run-control.js';
import { openRabbitRunControl } from '../adapters/run-control/rabbit-run-control.js';
import type { BrokerUrls } from '../adapters/frontier/rabbitmq/broker-urls.js';
import type { Logger } from '../logger.js';
import type { RunControl } from '../ports/run-control.js';
import { amqpConnector } from './amqp-connect.js';
import { readTlsCa } from './tls.js';

export interface RunControlSettings {
  /** Over RabbitMQ (a cluster: master and schedulers apart) or in-process (one machine). */
  rabbitmq: boolean;
  amqpUrl: BrokerUrls;
  runControlExchange: string;
  /** ACKCRAWL_TLS_CA: trusted on amqps://, as the frontier's connection does. */
  tlsCa?: string | undefined;
}

/** The run commands' channel of the master and of each scheduler, opened the same way by both. */
export async function openRunControl(settings: RunControlSettings, logger: Logger): Promise<RunControl> {
  if (!settings.rabbitmq) return createLocalRunControl(logger);
  return openRabbitRunControl({
    url: settings.amqpUrl,
    exchange: settings.runControlExchange,
    logger,
    ...(settings.tlsCa === undefined
      ? {}
      : { connect: amqpConnector('ackcrawl run-control', readTlsCa(settings)) }),
  });
}
