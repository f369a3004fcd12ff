import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { archiveKey, contentKey, type BlobStore } from '../../shared/ports/blob-store.js';

export interface BlobStoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

export type MakeBlobStore = () => Promise<BlobStoreFixture>;

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The BlobStore port's contract (shared/ports/blob-store.ts), run over every adapter. */
export function blobStoreContract(name: string, makeStore: MakeBlobStore): void {
  const define = (title: string, body: (store: BlobStore) => Promise<void>): void => {
    it(title, async () => {
      const fx = await makeStore();
      try {
        await body(fx.store);
      } finally {
        await fx.store.close().catch(() => undefined);
        await fx.cleanup();
      }
    });
  };

  describe(`${name}: blob store contract`, () => {
    define('stores a body once under its content address', async (store) => {
      const body = Buffer.from('<html>the same page</html>');
      const first = await store.putContentAddressed(body, { contentType: 'text/html' });
      assert.deepEqual(first, {
        key: contentKey(sha256(body)),
        sha256: sha256(body),
        bytes: body.length,
        existed: false,
      });
      assert.match(first.key, /^bodies\/sha256\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/);
      const second = await store.putContentAddressed(Buffer.from(body));
      assert.deepEqual(second, { ...first, existed: true });
      assert.deepEqual(await store.get(first.key), body);
      const other = await store.putContentAddressed(Buffer.from('<html>another page</html>'));
      assert.notEqual(other.key, first.key);
      assert.equal(other.existed, false);
    });

    define('put, get, exists and delete round-trip any bytes', async (store) => {
      const key = 'misc/round-trip.bin';
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      assert.equal(await store.exists(key), false);
      await store.put(key, bytes, { contentType: 'application/octet-stream' });
      assert.equal(await store.exists(key), true);
      assert.deepEqual(await store.get(key), bytes);
      await store.put(key, Buffer.from('replaced'));
      assert.equal((await store.get(key)).toString(), 'replaced');
      await store.delete(key);
      assert.equal(await store.exists(key), false);
      await store.delete(key); // deleting a missing key is fine
    });

    define('stores empty and multi-megabyte bodies', async (store) => {
      await store.put('misc/empty', Buffer.alloc(0));
      assert.equal((await store.get('misc/empty')).length, 0);
      const big = randomBytes(6 * 1024 * 1024);
      const put = await store.putContentAddressed(big);
      assert.equal(sha256(await store.get(put.key)), sha256(big));
    });

    define('a missing key rejects with BLOB_NOT_FOUND', async (store) => {
      await assert.rejects(store.get('nothing/here'), {
        name: 'BlobNotFoundError',
        code: 'BLOB_NOT_FOUND',
        retriable: false,
      });
      // A prefix of stored keys is not a blob either.
      await store.put('dir/file', Buffer.from('x'));
      await assert.rejects(store.get('dir'), { code: 'BLOB_NOT_FOUND' });
      assert.equal(await store.exists('dir'), false);
    });

    define('refuses keys that are not safe paths', async (store) => {
      for (const key of [
        '',
        '../escape',
        'a/../b',
        '/abs',
        'a//b',
        'a/',
        'sp ace',
        'a\\b',
        'x'.repeat(1025),
      ]) {
        await assert.rejects(store.put(key, Buffer.from('x')), { code: 'BLOB_BAD_KEY' }, key);
        await assert.rejects(store.get(key), { code: 'BLOB_BAD_KEY' }, key);
      }
    });

    define('lays archives out by job and day', async (store) => {
      const key = archiveKey({
        jobId: 'job-42',
        date: new Date('2024-04-01T23:59:59Z'),
        name: 'page.html.gz',
      });
      assert.equal(key, 'archives/job-42/2024/04/01/page.html.gz');
      await store.put(key, Buffer.from('raw'), { contentType: 'application/gzip' });
      assert.equal((await store.get(key)).toString(), 'raw');
      assert.throws(() => archiveKey({ jobId: '../x', date: new Date(), name: 'a' }), {
        code: 'BLOB_BAD_KEY',
      });
      assert.throws(() => archiveKey({ jobId: 'j', date: new Date(), name: 'a/b' }), {
        code: 'BLOB_BAD_KEY',
      });
      assert.throws(() => archiveKey({ jobId: 'j', date: new Date(Number.NaN), name: 'a' }), {
        code: 'BLOB_BAD_KEY',
      });
    });

    define('lists the keys that start with a prefix, partial last segment included', async (store) => {
      const keys = [
        'archives/j/2024/04/01/t-p0-0-9.jsonl.gz',
        'archives/j/2024/04/01/t-p0-10-19.jsonl.gz',
        'archives/j/2024/04/01/t-p1-0-4.jsonl.gz',
        'archives/j/2024/04/02/t-p0-20-29.jsonl.gz',
        'archives/k/2024/04/01/t-p0-0-9.jsonl.gz',
      ];
      for (const key of keys) await store.put(key, Buffer.from(key));
      const list = async (prefix: string): Promise<string[]> => {
        const found: string[] = [];
        for await (const key of store.list(prefix)) found.push(key);
        return found.sort();
      };
      assert.deepEqual(await list('archives/j/2024/04/01/t-p0-'), keys.slice(0, 2));
      assert.deepEqual(await list('archives/j/2024/04/01/t-p0-10-'), [keys[1]]);
      assert.deepEqual(await list('archives/j/'), keys.slice(0, 4).sort());
      assert.deepEqual(await list('archives/'), [...keys].sort());
      assert.deepEqual(await list(''), [...keys].sort());
      assert.deepEqual(await list('archives/nothing/'), []);
      assert.deepEqual(await list('archives/j/2024/04/01/t-p9'), []);
      for (const bad of ['/a', 'a//b', '../a', 'a b']) {
        await assert.rejects(list(bad), { code: 'BLOB_BAD_KEY' }, bad);
      }
    });

    define('close is safe to call twice; later calls reject with BLOB_STORE_CLOSED', async (store) => {
      await store.put('misc/a', Buffer.from('a'));
      await store.close();
      await store.close();
      await assert.rejects(store.get('misc/a'), { code: 'BLOB_STORE_CLOSED', retriable: false });
      await assert.rejects(store.putContentAddressed(Buffer.from('a')), { code: 'BLOB_STORE_CLOSED' });
    });
  });
}
