import { createServer } from 'node:net';

/** A loopback port nobody listens on (bound, read, released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A loopback port held by a listener until `release()`, then refused: nothing else started
 * meanwhile (a test's own servers on port 0) can be given it, as it can a `freePort()`.
 */
export async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { port, release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
