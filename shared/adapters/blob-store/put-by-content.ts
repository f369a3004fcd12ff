import {
  contentKey,
  sha256Hex,
  type BlobStore,
  type ContentAddressedBlob,
  type PutOptions,
} from '../../ports/blob-store.js';

/**
 * `BlobStore.putContentAddressed` over a store's own `exists` and `put`: the key is derived from the
 * body's SHA-256, and a body already stored is not uploaded again.
 */
export async function putByContent(
  store: Pick<BlobStore, 'exists' | 'put'>,
  body: Buffer,
  options: PutOptions,
): Promise<ContentAddressedBlob> {
  const sha256 = sha256Hex(body);
  const key = contentKey(sha256);
  const existed = await store.exists(key);
  if (!existed) await store.put(key, body, options);
  return { key, sha256, bytes: body.length, existed };
}
