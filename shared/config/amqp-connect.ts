import { connect as amqpConnect, type ChannelModel } from 'amqplib';
import { z } from 'zod';
import { field } from './load.js';
import { amqpTlsSocketOptions } from './tls.js';

export const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * `amqpUrl` (ACKCRAWL_AMQP_URL) of the roles that talk to RabbitMQ: one broker, or every node of
 * one cluster as a list (spaces or commas). Connections go to the first and move to the next one
 * when a node cannot be reached or is lost (shared/adapters/frontier/rabbitmq/broker-urls.ts).
 */
export const amqpUrlsSchema = field
  .list()
  .pipe(
    z
      .array(z.string().regex(/^amqps?:\/\/[^\s,]+$/, 'an amqp:// or amqps:// URL'))
      .min(1, 'at least one amqp:// or amqps:// URL'),
  )
  .default([DEFAULT_AMQP_URL]);

/**
 * Opens an AMQP connection as the RabbitMQ adapters' own default does (10 s timeout, no Nagle),
 * trusting the CAs of ACKCRAWL_TLS_CA on an amqps:// URL. Passed as their `connect` option.
 */
export function amqpConnector(
  connectionName: string,
  ca: readonly string[] | undefined,
): (url: string) => Promise<ChannelModel> {
  return (url) =>
    amqpConnect(url, {
      timeout: 10_000,
      noDelay: true,
      clientProperties: { connection_name: connectionName },
      ...amqpTlsSocketOptions(ca),
    });
}
