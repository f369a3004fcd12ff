import { connect as netConnect, isIP, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/** Sockets of one producer, which can all be cut at once. */
export interface KillableSockets {
  factory: ISocketFactory;
  /**
   * Destroys every open connection (requests on them fail at once) and makes every later one fail
   * before it connects: from now on nothing this producer sends can reach a broker.
   */
  kill(): void;
}

/** kafkajs's own factory: TCP or TLS, with keep-alive. */
export const plainSockets: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : netConnect({ host, port }, onConnect);
  socket.setKeepAlive(true, 60_000);
  return socket;
};

export function killableSockets(inner: ISocketFactory = plainSockets): KillableSockets {
  const open = new Set<Socket>();
  let killed = false;
  const abandoned = (): Error => new Error('the producer was abandoned after its send deadline');
  return {
    factory: (args) => {
      if (killed) {
        const socket = new Socket();
        // After kafkajs attached its listeners: it sees a connection error, as for a refused connect.
        setImmediate(() => socket.destroy(abandoned()));
        return socket;
      }
      const socket = inner(args);
      open.add(socket);
      socket.once('close', () => open.delete(socket));
      return socket;
    },
    kill: () => {
      killed = true;
      for (const socket of open) socket.destroy(abandoned());
      open.clear();
    },
  };
}
