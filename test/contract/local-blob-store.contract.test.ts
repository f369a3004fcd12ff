import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBlobStore } from '../../shared/adapters/blob-store/local-blob-store.js';
import { blobStoreContract } from './blob-store.contract.js';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-blobs-'));

blobStoreContract('local blob store', async () => {
  const dir = tempDir();
  return {
    store: new LocalBlobStore({ dir }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('local blob store: adapter specifics', () => {
  it('keeps keys as paths and leaves no temporary files behind', async () => {
    const dir = tempDir();
    try {
      const store = new LocalBlobStore({ dir });
      const put = await store.putContentAddressed(Buffer.from('body'));
      await store.put('archives/j/2024/01/02/a.html', Buffer.from('a'));
      await store.put('archives/j/2024/01/02/a.html', Buffer.from('b'));
      assert.ok(existsSync(join(dir, ...put.key.split('/'))));
      assert.deepEqual(readdirSync(join(dir, 'archives/j/2024/01/02')), ['a.html']);
      assert.equal(store.location.store, 'file');
      assert.equal(store.location.bucket, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports an unwritable directory as a non-retriable BLOB_ACCESS error', async () => {
    const dir = tempDir();
    try {
      const store = new LocalBlobStore({ dir });
      await store.put('file', Buffer.from('x'));
      // `file` is a file, so `file/inside` cannot be created.
      await assert.rejects(store.put('file/inside', Buffer.from('y')), {
        name: 'StorageError',
        code: 'BLOB_ACCESS',
        retriable: false,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
