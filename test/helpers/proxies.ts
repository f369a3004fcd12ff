import type { IncomingMessage } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createProxy } from 'proxy';

export interface TestProxy {
  /** The URL to give the crawler (credentials included when the proxy wants them). */
  url: string;
  port: number;
  /** Targets asked for, in order: absolute URLs (HTTP forwarding), `host:port` (CONNECT, SOCKS). */
  targets: string[];
  /** Connections accepted from clients. */
  connections: number;
  close(): Promise<void>;
}

function tracked(server: Server): { sockets: Set<Socket>; close: () => Promise<void> } {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    sockets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * An HTTP proxy on 127.0.0.1 (the `proxy` package: forwarding and CONNECT) whose own connections
 * to targets leave from `localAddress` (e.g. 127.0.0.2), so a target sees which proxy carried a
 * request. With `auth`, it wants `Proxy-Authorization: Basic user:pass` and answers 407 otherwise.
 */
export async function startHttpProxy(
  options: { localAddress?: string; auth?: { user: string; pass: string }; port?: number } = {},
): Promise<TestProxy> {
  const server = createProxy();
  if (options.localAddress) server.localAddress = options.localAddress;
  if (options.auth) {
    const want = `Basic ${Buffer.from(`${options.auth.user}:${options.auth.pass}`).toString('base64')}`;
    server.authenticate = (req: IncomingMessage) => req.headers['proxy-authorization'] === want;
  }
  const result: TestProxy = { url: '', port: 0, targets: [], connections: 0, close: async () => {} };
  server.on('request', (req: IncomingMessage) => result.targets.push(req.url ?? ''));
  server.on('connect', (req: IncomingMessage) => result.targets.push(req.url ?? ''));
  server.on('connection', () => (result.connections += 1));
  const { close } = tracked(server);
  result.port = await listen(server, options.port);
  const creds = options.auth ? `${options.auth.user}:${options.auth.pass}@` : '';
  result.url = `http://${creds}127.0.0.1:${result.port}`;
  result.close = close;
  return result;
}

/** Reads exactly `n` bytes from a socket's buffered data (a tiny framing helper for SOCKS). */
function reader(socket: Socket): (n: number) => Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  let waiting: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  const pump = (): void => {
    if (waiting && buffered.length >= waiting.n) {
      const { n, resolve } = waiting;
      waiting = null;
      const out = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      resolve(out);
    }
  };
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    pump();
  };
  socket.on('data', onData);
  socket.once('close', () => waiting?.reject(new Error('closed')));
  return (n) =>
    new Promise<Buffer>((resolve, reject) => {
      waiting = { n, resolve, reject };
      pump();
    });
}

/**
 * A SOCKS5 server (RFC 1928, CONNECT only; RFC 1929 user/password when `auth` is set) on
 * 127.0.0.1. Its connections to targets leave from `localAddress`. With `refuseTargets`, it
 * records the destination and answers "connection refused" (REP 5) without connecting anywhere.
 */
export async function startSocks5Server(
  options: { localAddress?: string; auth?: { user: string; pass: string }; refuseTargets?: boolean } = {},
): Promise<TestProxy> {
  const result: TestProxy = { url: '', port: 0, targets: [], connections: 0, close: async () => {} };
  const server = createServer((client) => {
    result.connections += 1;
    client.on('error', () => client.destroy());
    void handshake(client).catch(() => client.destroy());
  });
  const reply = (client: Socket, rep: number): void => {
    client.write(Buffer.from([5, rep, 0, 1, 0, 0, 0, 0, 0, 0]));
  };
  async function handshake(client: Socket): Promise<void> {
    const read = reader(client);
    const [version, nMethods] = await read(2);
    if (version !== 5) throw new Error('not SOCKS5');
    const methods = [...(await read(nMethods ?? 0))];
    const wanted = options.auth ? 2 : 0;
    if (!methods.includes(wanted)) {
      client.end(Buffer.from([5, 0xff]));
      return;
    }
    client.write(Buffer.from([5, wanted]));
    if (options.auth) {
      const [, userLength] = await read(2);
      const user = (await read(userLength ?? 0)).toString();
      const [passLength] = await read(1);
      const pass = (await read(passLength ?? 0)).toString();
      const ok = user === options.auth.user && pass === options.auth.pass;
      client.write(Buffer.from([1, ok ? 0 : 1]));
      if (!ok) {
        client.end();
        return;
      }
    }
    const [, command, , addressType] = await read(4);
    let host: string;
    if (addressType === 1) host = [...(await read(4))].join('.');
    else if (addressType === 3) host = (await read((await read(1))[0] ?? 0)).toString();
    else if (addressType === 4) {
      const raw = await read(16);
      host = (raw.toString('hex').match(/.{4}/g) ?? []).join(':');
    } else throw new Error('bad address type');
    const port = (await read(2)).readUInt16BE(0);
    result.targets.push(`${host}:${port}`);
    if (command !== 1) {
      reply(client, 7);
      client.end();
      return;
    }
    if (options.refuseTargets) {
      reply(client, 5);
      client.end();
      return;
    }
    client.removeAllListeners('data');
    client.pause();
    const upstream = connect({
      host,
      port,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    upstream.once('error', () => {
      reply(client, 5);
      client.end();
    });
    upstream.once('connect', () => {
      upstream.removeAllListeners('error');
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      reply(client, 0);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }
  const { close } = tracked(server);
  result.port = await listen(server);
  const creds = options.auth ? `${options.auth.user}:${options.auth.pass}@` : '';
  result.url = `socks5://${creds}127.0.0.1:${result.port}`;
  result.close = close;
  return result;
}
