import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/** One client connection through the proxy: when it opened and closed (performance.now()). */
export interface ProxiedConnection {
  id: number;
  openedAt: number;
  closedAt: number | null;
}

export interface StallingProxy {
  /** A kafkajs socket factory whose connections, to any broker, go through the proxy. */
  socketFactory: ISocketFactory;
  /** Stop forwarding in both directions: what arrives is held (a broker that stopped answering). */
  stall(): void;
  /** Forward again, held data first. Data held for a connection that closed meanwhile is dropped. */
  resume(): void;
  connections: ProxiedConnection[];
  close(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 in front of one Kafka broker, for faults no test may cause in the shared
 * broker itself (no SIGSTOP of a service others use): `stall()` makes Kafka look hung to the clients
 * that use it, and only to them. kafkajs reconnects to the broker address the metadata names, so the
 * socket factory sends every connection here whatever host and port kafkajs asks for.
 */
export async function startStallingProxy(broker: string): Promise<StallingProxy> {
  const [host = '127.0.0.1', port = '9092'] = broker.split(':');
  let stalled = false;
  const pairs = new Set<{ flush(): void; destroy(): void }>();
  const connections: ProxiedConnection[] = [];
  const server = createServer((client: Socket) => {
    const upstream = connect({ host, port: Number(port) });
    const record: ProxiedConnection = { id: connections.length, openedAt: performance.now(), closedAt: null };
    connections.push(record);
    const up: Buffer[] = [];
    const down: Buffer[] = [];
    const pair = {
      flush: () => {
        for (const chunk of up.splice(0)) upstream.write(chunk);
        for (const chunk of down.splice(0)) client.write(chunk);
      },
      destroy: () => {
        client.destroy();
        upstream.destroy();
      },
    };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => (stalled ? up.push(chunk) : upstream.write(chunk)));
    upstream.on('data', (chunk: Buffer) => (stalled ? down.push(chunk) : client.write(chunk)));
    const end = (): void => {
      record.closedAt ??= performance.now();
      up.length = 0;
      down.length = 0;
      pairs.delete(pair);
      pair.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxyPort = (server.address() as AddressInfo).port;
  return {
    socketFactory: ({ onConnect }) => {
      const socket = connect({ host: '127.0.0.1', port: proxyPort }, onConnect);
      socket.setKeepAlive(true, 60_000);
      return socket;
    },
    stall: () => {
      stalled = true;
    },
    resume: () => {
      stalled = false;
      for (const pair of pairs) pair.flush();
    },
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) pair.destroy();
        server.close(() => resolve());
      }),
  };
}
