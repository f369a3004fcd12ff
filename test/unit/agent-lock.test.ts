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

  test('agents starting together over a stale lock: exactly one takes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-lock-'));
    const lockModule = new URL('../../shared/processes/agent-lock.js', import.meta.url).href;
    // Each contender waits for the same instant, tries, says what it got, and holds a won lock
    // long enough for every other contender to see it alive.
    const contender = `
      const { acquireAgentLock } = await import(${JSON.stringify(lockModule)});
      while (Date.now() < Number(process.argv[1])) {}
      try {
        const lock = acquireAgentLock(process.argv[2], 'same');
        process.stdout.write('won');
        setTimeout(() => lock.release(), 2000);
      } catch (err) {
        process.stdout.write(err.code);
      }`;
    try {
      for (let round = 0; round < 4; round++) {
        const dead = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
        const deadPid = await new Promise<number>((resolve) => dead.once('spawn', () => resolve(dead.pid!)));
        const deadTicks = readProcStat(deadPid)?.startTicks ?? 1;
        await new Promise((resolve) => dead.once('exit', resolve));
        writeHolder(agentLockPath(dir, 'same'), { pid: deadPid, startTicks: deadTicks });
        const at = Date.now() + 1500;
        const said = await Promise.all(
          Array.from({ length: 6 }, async () => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', contender, String(at), dir], {
              stdio: ['ignore', 'pipe', 'inherit'],
            });
            let out = '';
            child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
            await new Promise((resolve) => child.once('exit', resolve));
            return out;
          }),
        );
        assert.equal(said.filter((s) => s === 'won').length, 1, `round ${round}: ${said.join(', ')}`);
        assert.equal(
          said.filter((s) => s === 'AGENT_ID_IN_USE').length,
          5,
          `round ${round}: ${said.join(', ')}`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
