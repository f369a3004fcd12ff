import {
  BlobNotFoundError,
  contentKey,
  sha256Hex,
  type BlobLocation,
  type BlobStore,
  type ContentAddressedBlob,
} from '../../shared/ports/blob-store.js';

/** A blob store in memory, for unit tests (the real ones pass test/contract/blob-store.contract.ts). */
export class MemoryBlobStore implements BlobStore {
  readonly location: BlobLocation = { store: 's3', bucket: 'memory' };
  readonly blobs = new Map<string, { body: Buffer; contentType: string | undefined }>();
  uploads = 0;

  async putContentAddressed(
    body: Buffer,
    options: { contentType?: string } = {},
  ): Promise<ContentAddressedBlob> {
    const sha256 = sha256Hex(body);
    const key = contentKey(sha256);
    const existed = this.blobs.has(key);
    if (!existed) await this.put(key, body, options);
    return { key, sha256, bytes: body.length, existed };
  }

  async put(key: string, body: Buffer, options: { contentType?: string } = {}): Promise<void> {
    this.uploads += 1;
    this.blobs.set(key, { body: Buffer.from(body), contentType: options.contentType });
  }

  async get(key: string): Promise<Buffer> {
    const blob = this.blobs.get(key);
    if (!blob) throw new BlobNotFoundError(key);
    return Buffer.from(blob.body);
  }

  async exists(key: string): Promise<boolean> {
    return this.blobs.has(key);
  }

  async *list(prefix: string): AsyncIterable<string> {
    for (const key of this.blobs.keys()) if (key.startsWith(prefix)) yield key;
  }

  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }

  async close(): Promise<void> {}
}
