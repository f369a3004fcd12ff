import { fork, spawn, type ChildProcess } from 'node:child_process';
import type { RoleIpcMessage } from '../../../shared/protocol/ipc.js';

export interface RoleProcessOptions {
  name: string;
  script: string;
  env: () => NodeJS.ProcessEnv;
  /** With IPC: the role says `listening` (master, scheduler). */
  ipc: boolean;
  /** Node flags for the child. */
  execArgv?: string[];
  /** The child's stdout goes here (the master prints its admin token on stdout). */
  stdout?: NodeJS.WritableStream;
  stderr: 'inherit' | 'ignore';
  onMessage?: (message: RoleIpcMessage) => void;
  /** The child exited while it was meant to run (it is restarted after `restartDelayMs`). */
  onCrash?: (exit: { code: number | null; signal: string | null; restartInMs: number }) => void;
  /** First wait before a restart; doubled for each crash within a minute, up to 30 s. */
  restartDelayMs: number;
}

const MAX_RESTART_DELAY_MS = 30_000;

/**
 * One role kept running as a child process: started, restarted after a crash (with backoff), and
 * stopped with SIGTERM (then SIGKILL after `killAfterMs`). Its PID is the child's own.
 */
export class RoleProcess {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private crashes: number[] = [];

  constructor(private readonly options: RoleProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null;
  }

  start(): void {
    if (this.child || this.stopping) return;
    const { script, ipc, execArgv, stderr } = this.options;
    const stdio = ['ignore', this.options.stdout ? 'pipe' : 'ignore', stderr] as const;
    const env = this.options.env();
    const child = ipc
      ? fork(script, [], { env, stdio: [...stdio, 'ipc'], execArgv: execArgv ?? [] })
      : spawn(process.execPath, [...(execArgv ?? []), script], { env, stdio: [...stdio] });
    this.child = child;
    if (this.options.stdout) child.stdout?.pipe(this.options.stdout, { end: false });
    child.on('message', (message: RoleIpcMessage) => this.options.onMessage?.(message));
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.stopping) return;
      const now = Date.now();
      this.crashes = [...this.crashes.filter((at) => now - at < 60_000), now];
      const restartInMs = Math.min(
        this.options.restartDelayMs * 2 ** (this.crashes.length - 1),
        MAX_RESTART_DELAY_MS,
      );
      this.options.onCrash?.({ code, signal, restartInMs });
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        this.start();
      }, restartInMs);
    });
  }

  /** Restarts the child now (a new scheduler URL for the agent, say). */
  async restart(killAfterMs: number): Promise<void> {
    await this.stop(killAfterMs);
    this.stopping = false;
    this.start();
  }

  /** SIGTERM, then SIGKILL after `killAfterMs`; resolves once the child is gone. Safe twice. */
  async stop(killAfterMs: number): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    await gone;
    clearTimeout(timer);
  }
}
