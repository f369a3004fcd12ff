import type http from 'node:http';
import type { LookupFunction, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AgentConnectOpts } from 'agent-base';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { redactProxyUrl } from '../../../shared/protocol/proxy-url.js';
import type { Agents } from './agents.js';
import type { PageErrorCode } from '../../../shared/error-codes/index.js';
import { FetchError } from './fetch-error.js';

type ProxyFailureCode =
  'PROXY_CONNECT_FAILED' | 'PROXY_TIMEOUT' | 'PROXY_HANDSHAKE_FAILED' | 'PROXY_AUTH_FAILED';
import { checkTarget, type LookupAll } from './target-guard.js';

/**
 * A failure of the proxy itself, before the request reached the target: the proxy refused or did
 * not answer, its TLS or SOCKS handshake failed, or it wanted other credentials. Nothing was sent
 * to the target, so another proxy may take the same request at once.
 */
export class ProxyFailure extends FetchError {
  constructor(code: ProxyFailureCode, message: string, cause?: unknown) {
    super(code, message, { cause });
  }
}

export interface ProxyAgentOptions {
  allowPrivate: boolean;
  /** Limit on reaching the proxy and getting its go-ahead (TCP, TLS, CONNECT or SOCKS handshake). */
  connectTimeoutMs: number;
  maxSockets: number;
  /** DNS for the address check (tests inject one). */
  lookup?: LookupAll;
}

/** SOCKS replies that speak of the target, not of the proxy (RFC 1928 §6). */
const SOCKS_TARGET_REPLIES: Record<string, PageErrorCode> = {
  ConnectionRefused: 'CONNECTION_REFUSED',
  HostUnreachable: 'HOST_UNREACHABLE',
  NetworkUnreachable: 'NETWORK_UNREACHABLE',
  TTLExpired: 'HOST_UNREACHABLE',
};

function classify(err: unknown, label: string): FetchError {
  if (err instanceof FetchError) return err;
  const e = err as { code?: string; message?: string };
  const message = (e.message ?? String(err)).slice(0, 300);
  const reply = /rejected connection - (\w+)/.exec(message)?.[1];
  if (reply && SOCKS_TARGET_REPLIES[reply]) {
    return new FetchError(SOCKS_TARGET_REPLIES[reply], `via ${label}: ${message}`, {
      cause: err,
    });
  }
  if (/auth/i.test(message)) {
    return new ProxyFailure('PROXY_AUTH_FAILED', `proxy ${label} refused the credentials: ${message}`, err);
  }
  // The SOCKS client keeps only the message of a socket error, not its code.
  const code = e.code ?? /\b(E[A-Z_]{4,})\b/.exec(message)?.[1];
  if (code?.startsWith('E')) {
    return new ProxyFailure('PROXY_CONNECT_FAILED', `cannot reach proxy ${label} (${code}): ${message}`, err);
  }
  return new ProxyFailure('PROXY_HANDSHAKE_FAILED', `proxy ${label} handshake failed: ${message}`, err);
}

/** A lookup that answers with the address the check approved, so the check and the use agree. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * Runs one proxy connect with the address check before it and a time limit around it, and turns
 * what goes wrong into a ProxyFailure (the proxy's fault) or a FetchError (the target's).
 */
async function guardedConnect(
  opts: AgentConnectOpts,
  options: ProxyAgentOptions,
  label: string,
  pinLookup: boolean,
  connect: (opts: AgentConnectOpts) => Promise<Duplex>,
): Promise<Duplex> {
  let connectOpts = opts;
  if (!options.allowPrivate) {
    const [first] = await checkTarget(opts.host ?? '', options.lookup);
    if (pinLookup && first) connectOpts = { ...opts, lookup: pinnedLookup(first.address, first.family) };
  }
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = connect(connectOpts);
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(
        new ProxyFailure(
          'PROXY_TIMEOUT',
          `proxy ${label} did not connect within ${options.connectTimeoutMs} ms`,
        ),
      );
    }, options.connectTimeoutMs);
  });
  // A connect that completes after the limit gives its socket back at once.
  attempt.then(
    (socket) => timedOut && socket.destroy(),
    () => undefined,
  );
  try {
    return await Promise.race([attempt, limit]);
  } catch (err) {
    throw classify(err, label);
  } finally {
    clearTimeout(timer);
  }
}

class GuardedHttpProxyAgent extends HttpProxyAgent<string> {
  constructor(
    proxy: string,
    private readonly guard: ProxyAgentOptions,
    agentOptions: http.AgentOptions,
  ) {
    super(proxy, agentOptions);
  }
  override connect(
    req: Parameters<HttpProxyAgent<string>['connect']>[0],
    opts: AgentConnectOpts,
  ): Promise<Socket> {
    const label = redactProxyUrl(this.proxy.href);
    return guardedConnect(opts, this.guard, label, false, (o) => super.connect(req, o)) as Promise<Socket>;
  }
}

class GuardedHttpsProxyAgent extends HttpsProxyAgent<string> {
  constructor(
    proxy: string,
    private readonly guard: ProxyAgentOptions,
    agentOptions: http.AgentOptions,
  ) {
    super(proxy, agentOptions);
  }
  override connect(req: http.ClientRequest, opts: AgentConnectOpts): Promise<Socket> {
    const label = redactProxyUrl(this.proxy.href);
    return guardedConnect(opts, this.guard, label, false, (o) => super.connect(req, o)) as Promise<Socket>;
  }
}

class GuardedSocksProxyAgent extends SocksProxyAgent {
  private readonly label: string;
  constructor(
    proxy: string,
    private readonly guard: ProxyAgentOptions,
    agentOptions: http.AgentOptions,
  ) {
    super(proxy, agentOptions);
    this.label = redactProxyUrl(proxy);
  }
  override connect(req: http.ClientRequest, opts: AgentConnectOpts): Promise<Socket> {
    // socks4:// and socks5:// resolve here (the check's address is used); socks4a and socks5h
    // hand the name to the proxy.
    return guardedConnect(opts, this.guard, this.label, this.shouldLookup, (o) =>
      super.connect(req, o),
    ) as Promise<Socket>;
  }
}

/** The http and https agents that send every request through one proxy. */
export function createProxyAgents(proxyUrl: string, options: ProxyAgentOptions): Agents {
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets,
    maxFreeSockets: 16,
    scheduling: 'lifo',
  };
  const protocol = new URL(proxyUrl).protocol;
  if (protocol === 'http:' || protocol === 'https:') {
    return {
      http: new GuardedHttpProxyAgent(proxyUrl, options, agentOptions),
      https: new GuardedHttpsProxyAgent(proxyUrl, options, agentOptions) as unknown as Agents['https'],
    };
  }
  const socks = new GuardedSocksProxyAgent(proxyUrl, options, agentOptions);
  return { http: socks, https: socks as unknown as Agents['https'] };
}
