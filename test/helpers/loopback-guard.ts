import dns from 'node:dns';
import net from 'node:net';

/** What the guard writes to stderr when it refuses a connection; tests assert it never appears. */
export const GUARD_MARK = 'LOOPBACK-GUARD refused';

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

type Lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;
type LookupCallback = (err: Error | null, address?: string | dns.LookupAddress[], family?: number) => void;

let installed = false;

/**
 * A safety net for tests about hostile servers: every TCP connection this process opens must go to
 * loopback. A connection to any other address (an IP literal, or a name that resolves elsewhere)
 * fails before connecting, and GUARD_MARK is written to stderr. The crawler's own address filter
 * is what the tests check; this only makes sure that if it ever broke, a test fails instead of
 * reaching 10.0.0.1 or 169.254.169.254 on the machine's network.
 */
export function installLoopbackGuard(): void {
  if (installed) return;
  installed = true;
  const connect = net.Socket.prototype.connect;
  const refuse = (socket: net.Socket, target: string): net.Socket => {
    process.stderr.write(`${GUARD_MARK} a connection to ${target}\n`);
    const err = Object.assign(new Error(`${GUARD_MARK} a connection to ${target}`), {
      code: 'ELOOPBACKGUARD',
    });
    process.nextTick(() => socket.destroy(err));
    return socket;
  };
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
    const first = args[0];
    const options = (Array.isArray(first) ? first[0] : first) as unknown;
    if (typeof options === 'number') {
      const host = typeof args[1] === 'string' ? args[1] : 'localhost';
      if (net.isIP(host) !== 0 && !isLoopback(host)) return refuse(this, host);
    } else if (typeof options === 'object' && options !== null && !('path' in options && options.path)) {
      const tcp = options as { host?: string; lookup?: Lookup };
      const host = tcp.host ?? 'localhost';
      if (net.isIP(host) !== 0) {
        if (!isLoopback(host)) return refuse(this, host);
      } else {
        const lookup: Lookup = tcp.lookup ?? (dns.lookup as unknown as Lookup);
        tcp.lookup = (hostname, lookupOptions, callback) =>
          lookup(hostname, lookupOptions, (err, address, family) => {
            if (err) return callback(err);
            const all = Array.isArray(address) ? address.map((a) => a.address) : [address ?? ''];
            const outside = all.find((a) => !isLoopback(a));
            if (outside === undefined) return callback(null, address, family);
            process.stderr.write(`${GUARD_MARK} a connection to ${hostname} (${outside})\n`);
            callback(
              Object.assign(new Error(`${GUARD_MARK} ${hostname} → ${outside}`), { code: 'ELOOPBACKGUARD' }),
            );
          });
      }
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  };
}
