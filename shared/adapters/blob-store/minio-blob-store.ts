import http from 'node:http';
import https from 'node:https';
import { buffer } from 'node:stream/consumers';
import { Client } from 'minio';
import { InvalidInputError } from '../../errors.js';
import {
  assertBlobKey,
  assertBlobPrefix,
  BlobNotFoundError,
  blobStoreClosed,
  type BlobLocation,
  type BlobStore,
  type ContentAddressedBlob,
  type PutOptions,
} from '../../ports/blob-store.js';
import { putByContent } from './put-by-content.js';
import { NOT_FOUND_CODES, s3Code, toBlobError, type BlobStoreWhere } from './minio-errors.js';

export interface MinioBlobStoreOptions {
  /** `http://host:port` or `https://host:port`. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region?: string;
  /** A request whose socket stays silent this long fails with a retriable error. */
  requestTimeoutMs?: number;
  /** CAs trusted for an https endpoint (shared/config/tls.ts readTlsCa); absent: the system's. */
  ca?: readonly string[] | undefined;
}

/** The keep-alive agent of the client's transport: https (verified, with `ca` if given) or http. */
export function minioTransportAgent(secure: boolean, ca?: readonly string[]): http.Agent {
  return secure
    ? new https.Agent({ keepAlive: true, rejectUnauthorized: true, ...(ca ? { ca: [...ca] } : {}) })
    : new http.Agent({ keepAlive: true });
}

/**
 * Blobs in an S3 bucket through the minio client; the bucket is created on first use if missing.
 * The client's own retries are off (they print to the console and hide the cause): a failure
 * comes back at once as a typed StorageError and the caller, which owns the batch, retries.
 */
export class MinioBlobStore implements BlobStore {
  readonly location: BlobLocation;
  private readonly client: Client;
  private readonly agent: http.Agent;
  private readonly region: string;
  private readonly where: BlobStoreWhere;
  private bucketReady: Promise<void> | null = null;
  private closed = false;

  constructor(options: MinioBlobStoreOptions) {
    let url: URL;
    try {
      url = new URL(options.endpoint);
    } catch {
      throw new InvalidInputError('BLOB_STORE_CONFIG', `S3 endpoint is not a URL: ${options.endpoint}`);
    }
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      throw new InvalidInputError('BLOB_STORE_CONFIG', `S3 endpoint must be http(s): ${options.endpoint}`);
    }
    this.region = options.region ?? 'us-east-1';
    this.location = { store: 's3', bucket: options.bucket };
    this.where = { endpoint: url.origin, bucket: options.bucket };
    this.agent = minioTransportAgent(secure, options.ca);
    this.client = new Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : secure ? 443 : 80,
      useSSL: secure,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      region: this.region,
      pathStyle: true,
      transport: timedTransport(secure ? https : http, options.requestTimeoutMs ?? 30_000),
      transportAgent: this.agent,
      retryOptions: { disableRetry: true },
    });
  }

  async putContentAddressed(body: Buffer, options: PutOptions = {}): Promise<ContentAddressedBlob> {
    return putByContent(this, body, options);
  }

  async put(key: string, body: Buffer, options: PutOptions = {}): Promise<void> {
    await this.ready(key);
    const meta = options.contentType ? { 'Content-Type': options.contentType } : {};
    await this.call(`cannot store blob ${key}`, () =>
      this.client.putObject(this.location.bucket, key, body, body.length, meta),
    );
  }

  async get(key: string): Promise<Buffer> {
    await this.ready(key);
    try {
      const stream = await this.client.getObject(this.location.bucket, key);
      return await buffer(stream);
    } catch (err) {
      if (NOT_FOUND_CODES.has(s3Code(err))) throw new BlobNotFoundError(key, { cause: err });
      throw this.failed(`cannot read blob ${key}`, err);
    }
  }

  async exists(key: string): Promise<boolean> {
    await this.ready(key);
    try {
      await this.client.statObject(this.location.bucket, key);
      return true;
    } catch (err) {
      if (NOT_FOUND_CODES.has(s3Code(err))) return false;
      throw this.failed(`cannot stat blob ${key}`, err);
    }
  }

  async *list(prefix: string): AsyncIterable<string> {
    if (this.closed) throw blobStoreClosed();
    assertBlobPrefix(prefix);
    await this.bucket();
    try {
      for await (const item of this.client.listObjectsV2(this.location.bucket, prefix, true)) {
        if (typeof item.name === 'string') yield item.name;
      }
    } catch (err) {
      throw this.failed(`cannot list blobs under ${prefix}`, err);
    }
  }

  async delete(key: string): Promise<void> {
    await this.ready(key);
    await this.call(`cannot delete blob ${key}`, () => this.client.removeObject(this.location.bucket, key));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.agent.destroy();
  }

  /** Checks the store is open and the key valid, and creates the bucket once (see `bucket`). */
  private async ready(key: string): Promise<void> {
    if (this.closed) throw blobStoreClosed();
    assertBlobKey(key);
    await this.bucket();
  }

  private async bucket(): Promise<void> {
    this.bucketReady ??= this.ensureBucket().catch((err: unknown) => {
      this.bucketReady = null;
      throw err;
    });
    await this.bucketReady;
  }

  private async ensureBucket(): Promise<void> {
    const bucket = this.location.bucket;
    await this.call(`cannot create bucket ${bucket}`, async () => {
      if (await this.client.bucketExists(bucket)) return;
      try {
        await this.client.makeBucket(bucket, this.region);
      } catch (err) {
        // Another process created it first.
        if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(s3Code(err))) throw err;
      }
    });
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.failed(what, err);
    }
  }

  private failed(what: string, err: unknown): Error {
    const mapped = toBlobError(what, err, this.where);
    // The bucket went away (deleted under us): create it again on the next call.
    if (mapped.code === 'BLOB_STORE_NO_BUCKET') this.bucketReady = null;
    return mapped;
  }
}

/** http(s).request with an idle-socket timeout: a hung S3 fails the request instead of hanging it. */
function timedTransport(base: typeof http | typeof https, timeoutMs: number): Pick<typeof http, 'request'> {
  const request = (...args: Parameters<typeof http.request>): http.ClientRequest => {
    const req = (base.request as typeof http.request)(...args);
    req.setTimeout(timeoutMs, () => {
      const err = Object.assign(new Error(`no answer from S3 within ${timeoutMs} ms`), {
        code: 'BLOB_STORE_TIMEOUT',
      });
      req.destroy(err);
    });
    return req;
  };
  return { request: request as typeof http.request };
}
