import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../../shared/logger.js';

export interface Spawner {
  /** Starts one crawler process for `slot`. */
  (slot: number): ChildProcess;
}

export interface ProcessManagerOptions {
  spawn: Spawner;
  logger: Logger;
  stopTimeoutMs: number;
  maxRestartsPerMinute: number;
  onChange?: () => void;
}

export interface SlotState {
  slot: number;
  pid: number | null;
  restarts: number;
  lastExit: { code: number | null; signal: string | null; at: string } | null;
}

interface Slot extends SlotState {
  child: ChildProcess | null;
  recentStarts: number[];
  timer: NodeJS.Timeout | null;
}

/**
 * Keeps N crawler processes running: a process that exits is started again (with a pause when a
 * slot keeps crashing). `stop` sends SIGTERM, waits, then SIGKILL. Safe to call twice.
 */
export class ProcessManager {
  private readonly slots: Slot[] = [];
  private stopping = false;

  constructor(private readonly options: ProcessManagerOptions) {}

  scale(processes: number): void {
    while (this.slots.length < processes) {
      const slot: Slot = {
        slot: this.slots.length,
        pid: null,
        restarts: 0,
        lastExit: null,
        child: null,
        recentStarts: [],
        timer: null,
      };
      this.slots.push(slot);
      this.startSlot(slot);
    }
    while (this.slots.length > processes) {
      const slot = this.slots.pop() as Slot;
      void this.stopSlot(slot);
    }
  }

  state(): SlotState[] {
    return this.slots.map(({ slot, pid, restarts, lastExit }) => ({ slot, pid, restarts, lastExit }));
  }

  private startSlot(slot: Slot): void {
    if (this.stopping) return;
    const now = Date.now();
    slot.recentStarts = slot.recentStarts.filter((t) => t > now - 60_000);
    if (slot.recentStarts.length >= this.options.maxRestartsPerMinute) {
      this.options.logger.error({ slot: slot.slot }, 'crawler keeps crashing; pausing this slot for 30 s');
      slot.timer = setTimeout(() => {
        slot.recentStarts = [];
        this.startSlot(slot);
      }, 30_000);
      return;
    }
    slot.recentStarts.push(now);
    const child = this.options.spawn(slot.slot);
    slot.child = child;
    slot.pid = child.pid ?? null;
    this.options.logger.info({ slot: slot.slot, pid: slot.pid }, 'crawler started');
    child.once('exit', (code, signal) => {
      slot.child = null;
      slot.pid = null;
      slot.lastExit = { code, signal, at: new Date().toISOString() };
      this.options.onChange?.();
      if (this.stopping || !this.slots.includes(slot)) return;
      slot.restarts += 1;
      this.options.logger.warn({ slot: slot.slot, code, signal }, 'crawler exited; starting it again');
      slot.timer = setTimeout(() => this.startSlot(slot), Math.min(100 * slot.recentStarts.length, 2000));
    });
    this.options.onChange?.();
  }

  private async stopSlot(slot: Slot): Promise<void> {
    if (slot.timer) clearTimeout(slot.timer);
    const child = slot.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), this.options.stopTimeoutMs);
    await exited;
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.slots.map((slot) => this.stopSlot(slot)));
  }
}

/**
 * V8 flags for crawler processes. A crawler allocates fast and briefly (bodies, records, frames):
 * an 8 MiB young generation instead of V8's default keeps its RSS near 140 MB at a few percent of
 * CPU (npm run bench measures both).
 */
export const CRAWLER_NODE_FLAGS = ['--max-semi-space-size=8'];

/**
 * Spawns `node <script>` with the agent's environment plus a crawler id per slot; slots for which
 * `renders` is true get the render capability (ACKCRAWL_CAN_RENDER).
 */
export function nodeSpawner(
  script: string,
  env: NodeJS.ProcessEnv,
  idPrefix: string,
  renders: (slot: number) => boolean = () => false,
): Spawner {
  return (slot) => {
    const render = renders(slot);
    return spawn(process.execPath, [...CRAWLER_NODE_FLAGS, script], {
      // The agent's own config file is not the crawler's: crawlers take the environment only.
      env: {
        ...env,
        ACKCRAWL_CONFIG: undefined,
        ACKCRAWL_CRAWLER_ID: `${idPrefix}-${render ? 'render-' : ''}${slot}-${Date.now().toString(36)}`,
        ...(render ? { ACKCRAWL_CAN_RENDER: 'true' } : {}),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  };
}
