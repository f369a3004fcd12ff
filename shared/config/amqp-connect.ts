import { connect as amqpConnect, type ChannelModel } from 'amqplib';
import { amqpTlsSocketOptions } from './tls.js';

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
