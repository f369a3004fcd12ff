import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { ProcessManager, RENDER_SLOT_BASE } from '../../shared/processes/process-manager.js';
import { silentLogger } from '../../shared/logger.js';
import type { DesiredState } from '../../shared/protocol/agent.js';
import { waitFor } from '../helpers/wait-for.js';

let nextPid = 50_000;

/** A child process as the manager sees it: a pid, kill(), 'exit' and 'message' events. */
class Child extends EventEmitter {
  readonly pid = nextPid++;
  exitCode: number | null = null;
  signalCode: string | null = null;
  readonly signals: string[] = [];
  constructor(private readonly drains: boolean) {
    super();
  }
  kill(signal: string): boolean {
    this.signals.push(signal);
    if (signal === 'SIGKILL' || this.drains) setImmediate(() => this.exit(null, signal));
    return true;
  }
  exit(code: number | null, signal: string | null): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
  }
  /** The crawler's first stats: it is running. */
  ready(): void {
    this.emit('message', { type: 'crawler-stats', inFlight: 1, pagesDone: 3, errors: 1 });
  }
}

function manager(
  options: { crashes?: number; drains?: boolean; render?: number; stopTimeoutMs?: number } = {},
) {
  const spawned: { slot: number; render: boolean; child: Child }[] = [];
  const m = new ProcessManager({
    spawn: (slot, render) => {
      const child = new Child(options.drains ?? true);
      spawned.push({ slot, render, child });
      return child as unknown as ChildProcess;
    },
    logger: silentLogger(),
    stopTimeoutMs: options.stopTimeoutMs ?? 50,
    crashLoopCrashes: options.crashes ?? 3,
    crashLoopWindowMs: 60_000,
    restartBackoffMs: 1,
    renderProcesses: options.render ?? 0,
  });
  const live = (slot: number): Child | undefined =>
    spawned.filter((s) => s.slot === slot && s.child.exitCode === null && s.child.signalCode === null).at(-1)
      ?.child;
  const state = (slot: number) => m.report().find((r) => r.slot === slot)?.state;
  return { m, spawned, live, state };
}

const desired = (fields: Partial<DesiredState> = {}): DesiredState => ({
  desiredProcesses: 2,
  drain: false,
  stoppedSlots: [],
  restarts: {},
  heartbeatMs: 2_000,
  ...fields,
});

describe('ProcessManager: reconcile to the desired state', () => {
  it('starts, scales up and down, and counts each slot across its processes', async () => {
    const { m, spawned, live, state } = manager();
    m.reconcile(desired());
    assert.equal(spawned.length, 2);
    assert.deepEqual(
      m.report().map((r) => r.state),
      ['starting', 'starting'],
    );
    live(0)?.ready();
    assert.equal(state(0), 'running');
    assert.deepEqual(
      m.report().find((r) => r.slot === 0),
      {
        slot: 0,
        render: false,
        pid: live(0)?.pid,
        state: 'running',
        startedAt: m.report()[0]?.startedAt,
        restarts: 0,
        inFlight: 1,
        pagesDone: 3,
        errors: 1,
      },
    );
    m.reconcile(desired({ desiredProcesses: 3 }));
    assert.equal(spawned.length, 3);
    m.reconcile(desired({ desiredProcesses: 1 }));
    await waitFor(() => m.report().length === 1, { message: 'slots 1 and 2 gone' });
    assert.deepEqual(
      spawned.slice(1).map((s) => s.child.signals),
      [['SIGTERM'], ['SIGTERM']],
      'stopped by a drain',
    );
    m.reconcile(desired({ desiredProcesses: 1 }));
    assert.equal(spawned.length, 3, 'idempotent');
  });

  it('a stopped slot stays stopped; a restart asked once restarts it once, a crash loop too', async () => {
    const { m, spawned, live, state } = manager();
    m.reconcile(desired({ restarts: { 0: 4 } }));
    assert.equal(spawned.length, 2, 'restarts seen at the first answer restart nothing');
    const first0 = live(0);
    m.reconcile(desired({ stoppedSlots: [1], restarts: { 0: 4 } }));
    await waitFor(() => state(1) === 'stopped');
    assert.equal(live(0), first0);
    m.reconcile(desired({ stoppedSlots: [1], restarts: { 0: 5 } }));
    await waitFor(() => live(0) !== undefined && live(0) !== first0, { message: 'slot 0 restarted' });
    const second0 = live(0);
    m.reconcile(desired({ stoppedSlots: [1], restarts: { 0: 5 } }));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(live(0), second0, 'the same answer again restarts nothing');
    assert.equal(state(1), 'stopped');
    m.reconcile(desired({ restarts: { 0: 5 } }));
    await waitFor(() => live(1) !== undefined, { message: 'slot 1 back' });
  });

  it('a crash restarts with backoff; crashes in a row make a crash loop that only a restart ends', async () => {
    const { m, spawned, live, state } = manager({ crashes: 3 });
    m.reconcile(desired({ desiredProcesses: 1 }));
    for (let i = 0; i < 3; i += 1) {
      await waitFor(() => live(0) !== undefined, { message: `start ${i}` });
      live(0)?.exit(2, null);
    }
    assert.equal(state(0), 'crash-loop');
    assert.equal(m.report()[0]?.restarts, 3);
    m.reconcile(desired({ desiredProcesses: 1 }));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(spawned.length, 3, 'no restart while in a crash loop');
    m.reconcile(desired({ desiredProcesses: 1, restarts: { 0: 1 } }));
    await waitFor(() => spawned.length === 4 && state(0) === 'starting', { message: 'restarted' });
  });

  it('a crawler killed while it works is restarted however often: never a crash loop', async () => {
    const { m, live, state } = manager({ crashes: 2 });
    m.reconcile(desired({ desiredProcesses: 1 }));
    for (let i = 0; i < 4; i += 1) {
      await waitFor(() => live(0) !== undefined, { message: `start ${i}` });
      live(0)?.ready();
      await new Promise((r) => setTimeout(r, 1_050));
      live(0)?.exit(null, 'SIGKILL');
    }
    await waitFor(() => live(0) !== undefined, { message: 'restarted again' });
    assert.equal(state(0), 'starting');
    assert.equal(m.report()[0]?.restarts, 4);
    await m.stop();
  });

  it('drain stops every slot, render ones too; a count brings them back; SIGKILL after the deadline', async () => {
    const { m, spawned, live, state } = manager({ render: 1, drains: false, stopTimeoutMs: 30 });
    m.reconcile(desired());
    assert.deepEqual(
      spawned.map((s) => [s.slot, s.render]).sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [0, false],
        [1, false],
        [RENDER_SLOT_BASE, true],
      ],
    );
    assert.ok(spawned.some((s) => s.slot === RENDER_SLOT_BASE && s.render));
    m.reconcile(desired({ drain: true }));
    assert.equal(state(0), 'stopping');
    await waitFor(() => m.report().every((r) => r.state === 'stopped'), { message: 'drained' });
    // These crawlers ignore SIGTERM: killed once the deadline passed.
    assert.ok(spawned.every((s) => s.child.signals.join() === 'SIGTERM,SIGKILL'));
    m.reconcile(desired());
    assert.ok(live(0) && live(1) && live(RENDER_SLOT_BASE));
    await m.stop();
    assert.ok(m.report().every((r) => r.state === 'stopped'));
    m.reconcile(desired());
    assert.equal(m.pids().length, 0, 'nothing starts after stop()');
  });
});

describe('ProcessManager: a crawler that cannot be spawned', () => {
  it('is restarted with backoff, then shown a crash loop; stopping does not wait for it', async () => {
    let attempts = 0;
    const m = new ProcessManager({
      // What child_process.spawn gives when the executable cannot be run: no pid, an 'error', no 'exit'.
      spawn: () => {
        attempts += 1;
        const child = new EventEmitter() as EventEmitter & { pid: undefined; kill: () => boolean };
        child.pid = undefined;
        child.kill = () => false;
        setImmediate(() => child.emit('error', Object.assign(new Error('spawn EAGAIN'), { code: 'EAGAIN' })));
        return child as unknown as ChildProcess;
      },
      logger: silentLogger(),
      stopTimeoutMs: 50,
      crashLoopCrashes: 3,
      crashLoopWindowMs: 60_000,
      restartBackoffMs: 1,
      renderProcesses: 0,
    });
    m.reconcile(desired({ desiredProcesses: 1 }));
    await waitFor(() => m.report()[0]?.state === 'crash-loop', {
      timeoutMs: 5_000,
      message: () => `crash loop (${JSON.stringify(m.report())})`,
    });
    assert.equal(attempts, 3);
    assert.equal(m.report()[0]?.pid ?? null, null);
    await m.stop();
  });
});
