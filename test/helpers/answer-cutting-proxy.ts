import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/** Kafka's API key of a Produce request (the 2 bytes after a request's 4-byte size). */
const PRODUCE = 0;

export interface AnswerCuttingRoutes {
  /** A kafkajs socket factory: connections to each of the brokers go through its own proxy. */
  socketFactory: ISocketFactory;
  /**
   * The next Produce request to the broker on `port` reaches it, but its answer does not: the
   * connection is cut when the answer comes, and connections to it are refused for `downMs`
   * after. The broker has stored the request; the client cannot know.
   */
  loseNextProduceAnswer(port: number, downMs: number): void;
  /** Produce answers lost so far. */
  readonly lost: number;
  close(): Promise<void>;
}

/**
 * TCP proxies on 127.0.0.1, one in front of each Kafka broker of `brokers` (host:port), for a fault
 * no test may cause in a shared broker: a request stored, its answer lost, the broker out of reach
 * for a moment. Each Kafka request is one write from kafkajs, so a chunk from the client starts
 * with a request's size and API key on loopback; a proxy that misreads one loses no answer, and
 * `lost` says so.
 */
export async function startAnswerCuttingRoutes(brokers: readonly string[]): Promise<AnswerCuttingRoutes> {
  const proxies = new Map<number, { server: Server; port: number; arm: (downMs: number) => void }>();
  let lost = 0;
  const sockets = new Set<Socket>();
  for (const broker of brokers) {
    const [host = '127.0.0.1', portText = '9092'] = broker.split(':');
    const brokerPort = Number(portText);
    let armedDownMs: number | null = null;
    let downUntil = 0;
    const server = createServer((client) => {
      if (Date.now() < downUntil) {
        client.destroy();
        return;
      }
      const upstream = connect({ host, port: brokerPort });
      sockets.add(client).add(upstream);
      let cutOnAnswer = false;
      client.on('data', (chunk: Buffer) => {
        if (armedDownMs !== null && chunk.length >= 6 && chunk.readInt16BE(4) === PRODUCE) {
          const downMs = armedDownMs;
          armedDownMs = null;
          cutOnAnswer = true;
          upstream.once('data', () => {
            lost += 1;
            downUntil = Date.now() + downMs;
            client.destroy();
            upstream.destroy();
          });
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!cutOnAnswer) client.write(chunk);
      });
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('close', end);
      upstream.on('close', end);
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    proxies.set(brokerPort, { server, port, arm: (downMs) => (armedDownMs = downMs) });
  }
  return {
    socketFactory: ({ host, port, onConnect }) => {
      const proxy = proxies.get(port);
      const socket = proxy
        ? connect({ host: '127.0.0.1', port: proxy.port }, onConnect)
        : connect({ host, port }, onConnect);
      socket.setKeepAlive(true, 60_000);
      return socket;
    },
    loseNextProduceAnswer: (port, downMs) => {
      const proxy = proxies.get(port);
      if (!proxy) throw new Error(`no proxy in front of port ${port}`);
      proxy.arm(downMs);
    },
    get lost() {
      return lost;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        [...proxies.values()].map(
          ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())),
        ),
      );
    },
  };
}
