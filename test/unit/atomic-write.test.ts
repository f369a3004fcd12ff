import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileAtomic, writeFileAtomic } from '../../shared/files/atomic-write.js';
import { saveJob, loadJob } from '../../scheduler/job-file.js';
import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';

const withDir = (run: (dir: string) => void): void => {
  const dir = mkdtempSync(join(tmpdir(), 'atomic-write-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('atomic file writes', () => {
  test('writeFileAtomic: owner-only by default, replaces a 0644 file, leaves no temp file', () => {
    withDir((dir) => {
      const path = join(dir, 'sub', 'file.json');
      writeFileAtomic(path, 'one');
      assert.equal(readFileSync(path, 'utf8'), 'one');
      assert.equal(mode(path), 0o600);
      const loose = join(dir, 'loose.json');
      writeFileSync(loose, 'old', { mode: 0o644 });
      writeFileAtomic(loose, 'new');
      assert.equal(readFileSync(loose, 'utf8'), 'new');
      assert.equal(mode(loose), 0o600, 'the new file does not inherit the old mode');
      assert.deepEqual(readdirSync(dir).sort(), ['loose.json', 'sub']);
      assert.deepEqual(readdirSync(join(dir, 'sub')), ['file.json']);
    });
  });

  test('createFileAtomic never replaces an existing file', () => {
    withDir((dir) => {
      const path = join(dir, 'token');
      assert.equal(createFileAtomic(path, 'first'), true);
      assert.equal(createFileAtomic(path, 'second'), false);
      assert.equal(readFileSync(path, 'utf8'), 'first');
      assert.equal(mode(path), 0o600);
      assert.deepEqual(readdirSync(dir), ['token'], 'the loser’s temp file is gone');
    });
  });

  test('job.json (proxy credentials) is written 0600 and read back', () => {
    withDir((dir) => {
      const path = join(dir, 'job.json');
      writeFileSync(path, '{}', { mode: 0o644 });
      const job = parseCrawlSettings({ seeds: ['http://a.test/'], proxies: ['http://u:p@127.0.0.1:9/'] });
      saveJob(path, job);
      assert.equal(mode(path), 0o600);
      assert.deepEqual(loadJob(path, parseCrawlSettings({ seeds: ['http://b.test/'] })), job);
    });
  });
});
