import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cleanOrphans, pidFilePath, writePids } from '../../shared/processes/pid-file.js';
import { silentLogger } from '../../shared/logger.js';

describe("the agent's pid file", () => {
  test('records live crawlers with their start time, and goes away with its folder when none are left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pid-file-'));
    try {
      const path = pidFilePath(dir, 'host/one:8800');
      assert.equal(path, join(dir, 'agents', 'host_one_8800.pids.json'));
      writePids(path, [process.pid, 2 ** 22 + 7]);
      const entries = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; startTicks: number }[];
      assert.deepEqual(
        entries.map((e) => e.pid),
        [process.pid],
        'a pid that names no process is not recorded',
      );
      assert.ok(entries[0]!.startTicks > 0);
      writePids(path, []);
      assert.equal(existsSync(path), false);
      assert.equal(existsSync(dirname(path)), false, 'the empty agents/ folder is removed too');
      writePids(path, []);
      assert.equal(existsSync(dirname(path)), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an orphan recorded by a previous agent is stopped; a reused pid or a garbled file is left alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pid-file-'));
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const path = pidFilePath(dir, 'a');
      writePids(path, [child.pid!]);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      assert.deepEqual(await cleanOrphans(path, 2_000, silentLogger()), [child.pid]);
      await exited;

      // Our own pid with a wrong start time: a different process now, never signalled.
      writeFileSync(path, JSON.stringify([{ pid: process.pid, startTicks: 1 }]));
      assert.deepEqual(await cleanOrphans(path, 100, silentLogger()), []);
      writeFileSync(path, '{not json');
      assert.deepEqual(await cleanOrphans(path, 100, silentLogger()), []);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
