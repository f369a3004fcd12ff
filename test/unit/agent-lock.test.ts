import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { acquireAgentLock, agentLockPath } from '../../shared/processes/agent-lock.js';
import { AppError } from '../../shared/errors.js';
import { readProcStat } from '../../shared/os/proc-stat.js';

const writeHolder = (path: string, holder: { pid: number; startTicks: number }): void => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(holder));
};

describe("the agent's lock on its id", () => {
  test('a live holder refuses a second agent with AGENT_ID_IN_USE; once it is gone, its lock is taken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-lock-'));
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => other.once('spawn', resolve));
      const path = agentLockPath(dir, 'host/one:8800');
      assert.equal(path, join(dir, 'agents', 'host_one_8800.lock'));
      writeHolder(path, { pid: other.pid!, startTicks: readProcStat(other.pid!)!.startTicks });
      assert.throws(
        () => acquireAgentLock(dir, 'host/one:8800'),
        (err: unknown) =>
          err instanceof AppError &&
          err.code === 'AGENT_ID_IN_USE' &&
          err.message.includes(String(other.pid)),
      );
      assert.deepEqual(
        JSON.parse(readFileSync(path, 'utf8')).pid,
        other.pid,
        "the holder's lock is left alone",
      );

      const gone = new Promise((resolve) => other.once('exit', resolve));
      other.kill('SIGKILL');
      await gone;
      const lock = acquireAgentLock(dir, 'host/one:8800');
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).pid, process.pid, 'a dead holder’s lock is taken');
      lock.release();
      assert.equal(existsSync(path), false, 'released: the file goes');
      assert.equal(existsSync(dirname(path)), false, 'and the agents/ folder with it, when empty');
    } finally {
      other.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a reused pid (another start time) or a garbled file does not hold the id; release leaves a lock that is not its own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-lock-'));
    try {
      const path = agentLockPath(dir, 'a');
      writeHolder(path, { pid: process.ppid, startTicks: 1 });
      acquireAgentLock(dir, 'a');
      writeFileSync(path, '{"pid": 12');
      const lock = acquireAgentLock(dir, 'a');
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).pid, process.pid);
      // Another agent took it meanwhile (ours was removed by hand, say): release does not touch it.
      writeHolder(path, { pid: process.ppid, startTicks: readProcStat(process.ppid)!.startTicks });
      lock.release();
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).pid, process.ppid);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
