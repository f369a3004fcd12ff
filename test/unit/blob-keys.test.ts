import { test } from 'node:test';
import assert from 'node:assert/strict';
import { archiveKey, assertBlobKey, contentKey } from '../../shared/ports/blob-store.js';

test('contentKey fans out by the first two bytes of the hash', () => {
  const sha = 'ab'.repeat(32);
  assert.equal(contentKey(sha), `bodies/sha256/ab/ab/${sha}`);
  assert.throws(() => contentKey('not-a-hash'), { code: 'BLOB_BAD_KEY' });
});

test('archiveKey lays archives out by job and UTC day', () => {
  // 23:30 on 31 Dec in UTC-1 is already 1 Jan in UTC.
  const date = new Date('2024-12-31T23:30:00-01:00');
  assert.equal(
    archiveKey({ jobId: 'task_001', date, name: 'page.html' }),
    'archives/task_001/2025/01/01/page.html',
  );
});

test('assertBlobKey accepts paths of safe segments only', () => {
  assertBlobKey('archives/j/2024/04/01/page.html');
  assertBlobKey('bodies/sha256/ab/cd/x');
  for (const bad of ['', '..', 'a/./b', 'a/b/', '/a', 'a b', 'ä']) {
    assert.throws(() => assertBlobKey(bad), { code: 'BLOB_BAD_KEY' }, bad);
  }
});
