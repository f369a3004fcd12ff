import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from './cli.js';

/** One role (`ackcrawl master`, `scheduler`, `agent`) as its own process, restartable by a test. */
export class TestRole {
  child: ChildProcess | null = null;
  stderr = '';

  constructor(
    private readonly role: 'master' | 'scheduler' | 'agent',
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  start(): this {
    const child = spawn(process.execPath, [CLI, this.role], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // ACKCRAWL_TEST_ROLE_LOGS=<dir> keeps each process's whole log there, to read after a failure.
    const logDir = process.env.ACKCRAWL_TEST_ROLE_LOGS;
    const logFile = logDir ? join(logDir, `${this.role}-${child.pid ?? 'unknown'}.log`) : null;
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-20_000);
      if (logFile) appendFileSync(logFile, d);
    });
    this.child = child;
    return this;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get name(): string {
    return this.role;
  }

  /** Whether the process started last is still running. */
  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL (or another signal) and wait for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await gone;
    clearTimeout(timer);
  }
}
