import { readFileSync } from 'node:fs';
import { rootCertificates, type ConnectionOptions } from 'node:tls';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { isLoopbackAddress } from '../http/request-guards.js';

/**
 * TLS settings shared by the roles (docs/tls.md). A listener's schema spreads `tlsListenerShape`
 * and calls `checkTlsPair` in its superRefine; a client's spreads `tlsClientShape`. Files are read
 * once, at start, by the composition root (`readTlsServerOptions`, `readTlsCa`).
 */
export const tlsListenerShape = {
  /** PEM files: with both, the listener speaks HTTPS (and the scheduler's crawler endpoint WSS). */
  tlsCert: z.string().min(1).optional(),
  tlsKey: z.string().min(1).optional(),
};

export const tlsClientShape = {
  /** A PEM file of CA certificates trusted besides the system's, for https://, wss://, amqps:// … */
  tlsCa: z.string().min(1).optional(),
};

const ENV = { tlsCert: 'ACKCRAWL_TLS_CERT', tlsKey: 'ACKCRAWL_TLS_KEY', tlsCa: 'ACKCRAWL_TLS_CA' } as const;

/** For a listener schema's superRefine: a certificate needs its key and the other way round. */
export function checkTlsPair(
  config: { tlsCert?: string | undefined; tlsKey?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if ((config.tlsCert === undefined) !== (config.tlsKey === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [config.tlsCert === undefined ? 'tlsCert' : 'tlsKey'],
      message: 'TLS needs both ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY',
    });
  }
}

function readPem(path: string, key: keyof typeof ENV): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError([
      `${key} (${ENV[key]}): ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    ]);
  }
}

export interface TlsServerOptions {
  cert: Buffer;
  key: Buffer;
}

/** The certificate and key for `https.createServer`, or null for a plain listener. */
export function readTlsServerOptions(config: {
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
}): TlsServerOptions | null {
  if (config.tlsCert === undefined || config.tlsKey === undefined) return null;
  return { cert: readPem(config.tlsCert, 'tlsCert'), key: readPem(config.tlsKey, 'tlsKey') };
}

/**
 * The CAs a client trusts: the system's plus those in ACKCRAWL_TLS_CA; undefined without the file
 * (Node's defaults). Given as `ca` to tls/https/ws/amqplib/kafkajs: verification is never off.
 */
export function readTlsCa(config: { tlsCa?: string | undefined }): string[] | undefined {
  if (config.tlsCa === undefined) return undefined;
  return [...rootCertificates, readPem(config.tlsCa, 'tlsCa').toString('utf8')];
}

/** Node's codes for a peer certificate that does not verify (not a network failure: retrying will not help). */
const CERTIFICATE_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** True for an error that says the peer's certificate is not trusted (or not for this host). */
export function isCertificateError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CERTIFICATE_ERRORS.has(code);
}

/** kafkajs's `ssl` for ACKCRAWL_KAFKA_TLS: verified TLS, with the CAs of ACKCRAWL_TLS_CA if given. */
export function kafkaSsl(enabled: boolean, ca: readonly string[] | undefined): ConnectionOptions | undefined {
  if (!enabled) return undefined;
  return { rejectUnauthorized: true, ...(ca ? { ca: [...ca] } : {}) };
}

/**
 * amqplib's socket options for an amqps:// URL: verified TLS, with the CAs of ACKCRAWL_TLS_CA.
 * (For amqp:// they are plain TCP options; `ca` is then unused.)
 */
export function amqpTlsSocketOptions(ca: readonly string[] | undefined): ConnectionOptions {
  return { rejectUnauthorized: true, ...(ca ? { ca: [...ca] } : {}) };
}

/**
 * True when a listener on `host` without a certificate and key would send tokens beyond this
 * machine in clear: what the roles warn of at start.
 */
export function listensInClear(
  host: string,
  config: { tlsCert?: string | undefined; tlsKey?: string | undefined },
): boolean {
  return !isLoopbackAddress(host) && (config.tlsCert === undefined || config.tlsKey === undefined);
}
