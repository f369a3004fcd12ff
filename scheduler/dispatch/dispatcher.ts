import type { Logger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { TaskValidators, WireTask } from '../../shared/protocol/messages.js';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { Located } from '../../shared/protocol/why.js';
import type { HostGate, RequestFeedback } from '../politeness/host-gate.js';
import { HopGrants } from './hop-grants.js';
import { FlightBook, type InFlight } from './flight-book.js';
import type { RenderPredicate } from './render-rule.js';
import { TaskBuffer, type HostWait } from './task-buffer.js';
import { wireTaskOf } from './wire-task.js';
import { DEFAULT_JOB_ID } from '../../shared/protocol/page-record.js';

export type { InFlight } from './flight-book.js';

/** What the dispatcher needs of a connected crawler. */
export interface CrawlerSession {
  readonly id: string;
  /** Tasks the crawler asked for and has not been sent yet. Never exceeded. */
  credit: number;
  /** The crawler announced the `render` capability: it may take tasks that need a browser. */
  readonly canRender?: boolean;
  /** Requests the crawler runs at once, as its hello said (a crawler's default when it did not). */
  readonly slots?: number;
  sendTasks(tasks: WireTask[]): void;
  /** The task's redirect back to its host may go (HopGrants). */
  grantHop?(taskId: string): void;
  /** The task's redirect back to its host may not go: robots.txt disallows it (HopGrants). */
  denyHop?(taskId: string): void;
}

/**
 * What happens to tasks whose crawler died (scheduler/dispatch/crash-tally.ts): a task that was
 * being worked on by a crawler that died without a goodbye is `struck`; tasks struck before are
 * suspects, sent one per crawler at a time, so that a task that kills crawlers meets few others.
 */
export interface CrashPolicy {
  isSuspect(lease: Lease): boolean;
  /** 'release': back to the frontier at once, no attempt counted; 'settled': retried or failed. */
  struck(lease: Lease): 'release' | 'settled';
}

/**
 * robots.txt (scheduler/robots): holds back a host's tasks until its rules are known, and puts out
 * the fetches that learn them.
 */
export interface HostHold {
  /** 0 when `next` may go out as far as the hold is concerned; else ms (Infinity: until a pump). */
  waitMs(next: Lease, now: number): number;
  /** A task of the hold's own (a robots.txt fetch) for this session, sent before any lease; or null. */
  nextTask(sessionId: string, now: number): WireTask | null;
  /**
   * True when the lease's redirects back to its host must be checked (robots.txt is obeyed and it
   * is a page): its task carries `hopGrants`, and each such hop asks `allowsHop` first.
   */
  checksHops?(lease: Lease): boolean;
  /** Whether a redirect of the lease's task to `url`, on its host, may go (false: robots.txt says no). */
  allowsHop?(lease: Lease, url: string): boolean;
}

export interface DispatcherOptions {
  frontier: Frontier;
  gate: HostGate;
  logger: Logger;
  clock: () => number;
  leaseMs: number;
  bufferSize: number;
  /** Buffered tasks per host before the frontier is asked to skip that host. */
  perHostBuffer: number | (() => number);
  /** Called before a lease is sent: true when the lease was settled some other way (recovery). */
  intercept?: (lease: Lease) => boolean;
  /** False while the outcome pipeline is backed up: no new work goes out. */
  canDispatch?: () => boolean;
  /** Which tasks need a browser (the job's render rules, read at each pump); null: none. */
  needsRender?: () => RenderPredicate | null;
  /** robots.txt: see HostHold. */
  hold?: HostHold;
  /** Crawlers that die: see CrashPolicy. Absent: a dead crawler's tasks simply go back. */
  crashes?: CrashPolicy;
  /**
   * False for a lease whose run does not dispatch now (paused, cancelled, or not hosted here): it
   * goes back to the frontier at once, no attempt counted. Absent: every lease dispatches.
   */
  dispatchable?: (lease: Lease) => boolean;
  /** The job of a run, sent with each task for its record (absent: the default job). */
  jobOf?: (runId: string) => string;
  /**
   * A recrawl's validators for a lease (the URL's last capture in its job, docs/recrawl.md); null
   * or absent: a full fetch. Called at dispatch: it must answer synchronously and fast.
   */
  validatorsOf?: (lease: Lease) => TaskValidators | null;
  /**
   * The cookies of a lease's host in its run's session; undefined (or absent) when the run keeps
   * none. Called at dispatch: it must answer synchronously and fast.
   */
  cookiesOf?: (lease: Lease) => readonly WireCookie[] | undefined;
  /** Called with every batch just before it goes to its session (per-run settings go first). */
  beforeSend?: (session: CrawlerSession, tasks: readonly WireTask[]) => void;
  /**
   * With no crawler connected for this long (from the start, or since the last one left), the
   * buffer goes back to the frontier and the frontier is told there is no demand (setDemand), so
   * no work waits here that no crawler can take. 2 s unless given: a crawler's reconnect is faster.
   */
  idleHandBackMs?: number;
}

const DEFAULT_IDLE_HAND_BACK_MS = 2_000;

/** How long tasks waiting for a render crawler are set aside when the frontier can do that. */
const STRANDED_WAIT_MS = 60_000;

/**
 * Moves leased tasks from the frontier to crawlers: a bounded buffer per host, politeness from the
 * host gate, and the crawlers' credit. It tracks every task in flight so a lost crawler's tasks go
 * back to the frontier and a late or foreign outcome is recognised as stale.
 */
export class Dispatcher {
  private readonly sessions = new Map<string, CrawlerSession>();
  private readonly inFlight: FlightBook;
  private readonly buffer: TaskBuffer;
  /** Tasks that were being worked on by a crawler that died: sent one per crawler at a time. */
  private readonly suspects: TaskBuffer;
  private readonly hostWait: HostWait;
  private readonly hops: HopGrants;
  private dispatching = true;
  private refilling = false;
  private frontierEmptyUntil = 0;
  private wakeTimer: NodeJS.Timeout | null = null;
  /** When the wake timer fires (performance.now()). */
  private wakeDue = 0;
  private sessionCursor = 0;
  private closed = false;
  private lastNoRendererWarning = 0;
  private noRendererSince: number | null = null;
  /** No crawler for idleHandBackMs: the frontier was told there is no demand. */
  private idle = false;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: DispatcherOptions) {
    const { perHostBuffer } = options;
    const perHost = typeof perHostBuffer === 'function' ? perHostBuffer : () => perHostBuffer;
    this.buffer = new TaskBuffer(perHost);
    this.suspects = new TaskBuffer(perHost);
    const { gate, hold } = options;
    // A request that ends frees its host's slot and teaches its adaptive delay: the buffers look at
    // the host again rather than at the wait they remember.
    this.inFlight = new FlightBook({
      finish: (host, now, feedback, startUnreported) => {
        gate.finish(host, now, feedback, startUnreported);
        this.buffer.recheck(host);
        this.suspects.recheck(host);
      },
    });
    this.hops = new HopGrants({
      gate,
      clock: options.clock,
      flightOf: (sessionId, taskId) => this.inFlight.of(sessionId, taskId),
      grant: (sessionId, taskId) => this.sessions.get(sessionId)?.grantHop?.(taskId),
      deny: (sessionId, taskId) => this.sessions.get(sessionId)?.denyHop?.(taskId),
      ...(hold?.allowsHop ? { allows: hold.allowsHop.bind(hold) } : {}),
      dropped: (host) => {
        this.buffer.recheck(host);
        this.suspects.recheck(host);
        this.wakeIn(0);
      },
      wakeIn: (ms) => this.wakeIn(ms),
    });
    // The buffers ask the gate first: a host that waits for a request to finish is passed over
    // without asking the robots.txt hold. Asking the hold is what queues the fetch of a host's
    // unknown rules, and that fetch too waits for the gate (RobotsGuard.nextTask).
    this.hostWait = hold
      ? {
          get generation() {
            return gate.generation;
          },
          waitMs: (host, now) => gate.waitMs(host, now),
          holdMs: (next, now) => hold.waitMs(next, now),
        }
      : gate;
    this.armIdle();
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  get bufferedCount(): number {
    return this.buffer.size + this.suspects.size;
  }

  /**
   * Buffered tasks whose host's politeness lets nothing start now (delay, concurrency, cool-down):
   * a scan of the hosts, for the metrics. The robots.txt hold is not asked (asking it has effects).
   */
  politenessWaiting(): number {
    const now = this.options.clock();
    const waits = (lease: Lease): boolean => this.options.gate.waitMs(lease.host, now) > 0;
    return this.buffer.hostsWhoseNext(waits).tasks + this.suspects.hostsWhoseNext(waits).tasks;
  }

  addSession(session: CrawlerSession): void {
    this.sessions.set(session.id, session);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.idle) {
      this.idle = false;
      this.setDemand(true);
      this.frontierEmptyUntil = 0;
    }
    this.tellCapacity();
  }

  /**
   * The crawler is gone: its tasks go back to the frontier at once, without counting an attempt.
   * When it `crashed` (no goodbye: killed, crashed, lost), the tasks it was working on are struck
   * (CrashPolicy), which may settle them instead; tasks only queued there go back as they are.
   */
  async removeSession(sessionId: string, { crashed }: { crashed: boolean }): Promise<void> {
    this.sessions.delete(sessionId);
    if (this.sessions.size === 0) this.armIdle();
    this.tellCapacity();
    const now = this.options.clock();
    const back: Lease[] = [];
    let struck = 0;
    let settled = 0;
    for (const flight of this.inFlight.endSession(sessionId, now)) {
      if (crashed && flight.working && this.options.crashes) {
        struck += 1;
        if (this.options.crashes.struck(flight.lease) === 'settled') {
          settled += 1;
          continue;
        }
      }
      back.push(flight.lease);
    }
    if (crashed && struck > 0) {
      this.options.logger.warn(
        { sessionId, tasks: back.length + settled, workedOn: struck, settled },
        'crawler gone without a goodbye; the tasks it worked on count as having been on a crashed crawler',
      );
    } else if (back.length > 0) {
      this.options.logger.info(
        { sessionId, tasks: back.length },
        'crawler gone; its tasks go back to the frontier',
      );
    }
    try {
      if (back.length > 0) await this.options.frontier.release(back);
    } finally {
      this.frontierEmptyUntil = 0;
      this.pump();
    }
  }

  /** The crawler hands tasks back unfinished: to the frontier, no attempt counted. Returns how many. */
  async release(sessionId: string, taskIds: readonly string[]): Promise<number> {
    const now = this.options.clock();
    const back: Lease[] = [];
    for (const taskId of taskIds) {
      const flight = this.inFlight.end(sessionId, taskId, now);
      if (flight) back.push(flight.lease);
    }
    try {
      if (back.length > 0) await this.options.frontier.release(back);
    } finally {
      if (back.length > 0) this.frontierEmptyUntil = 0;
      this.pump();
    }
    return back.length;
  }

  /** The crawler starts work on these tasks (until then they only wait in its queue). */
  working(sessionId: string, taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      const flight = this.inFlight.of(sessionId, taskId);
      if (flight) flight.working = true;
    }
  }

  /** The task's outcome arrived: it is no longer in flight. Null when stale or not this session's. */
  complete(sessionId: string, taskId: string, feedback?: RequestFeedback): Lease | null {
    return this.completeFlight(sessionId, taskId, feedback)?.lease ?? null;
  }

  /** As `complete`, with what the task was sent with (its capture id). */
  completeFlight(sessionId: string, taskId: string, feedback?: RequestFeedback): InFlight | null {
    const flight = this.inFlight.end(sessionId, taskId, this.options.clock(), feedback);
    // Its hop, if one waited, is dropped; or it was the start another hop waited for.
    if (this.hops.size > 0) this.hops.serve();
    return flight;
  }

  /** The crawler asks to send a redirect of a task back to the task's host, to `url` (HopGrants). */
  hop(sessionId: string, taskId: string, url?: string): void {
    if (!this.closed) this.hops.ask(sessionId, taskId, url);
  }

  /**
   * The crawler's request for a task went out: the host's delay runs from now. A second report of
   * one task is the request written once more (a stale kept-alive socket, the next proxy): the
   * delay runs from that write instead, which is the one that reached the host.
   */
  started(sessionId: string, taskId: string): void {
    const flight = this.inFlight.of(sessionId, taskId);
    if (!flight) return;
    flight.working = true;
    const { host } = flight.lease;
    const now = this.options.clock();
    if (!flight.startPending) {
      // Only later: a host already due again may wait longer, which the gate says when next asked.
      this.options.gate.reportResend(host, now);
      return;
    }
    flight.startPending = false;
    this.options.gate.reportStart(host, now);
    // A hop of the host waiting for this report may be due now.
    this.hops.serve();
    this.buffer.recheck(host);
    this.suspects.recheck(host);
    // The report only lets the host's next start be its delay from now: no other host can start
    // because of it, so instead of a pump the wake is set for this host's time.
    const next = this.buffer.peek(host) ?? this.suspects.peek(host);
    if (next === undefined) return;
    const politeness = this.hostWait.waitMs(host, now);
    const wait = Math.max(politeness, this.hostWait.holdMs?.(next, now) ?? 0);
    if (wait === 0) this.pump();
    else if (Number.isFinite(wait)) this.wakeIn(wait);
  }

  /**
   * The robots.txt hold has something to send, or the robots.txt fetch of `hosts` ended (their
   * slot is free, a Crawl-delay may be learned): those hosts are looked at again, then a pump.
   */
  holdChanged(hosts: readonly string[]): void {
    for (const host of hosts) {
      this.buffer.recheck(host);
      this.suspects.recheck(host);
    }
    this.pump();
  }

  /** Stop handing out work (a graceful stop drains); outcomes and releases are still taken. */
  stopDispatching(): void {
    this.dispatching = false;
    // A hop waiting for its time still needs the wake: its task runs on while crawlers drain.
    if (this.hops.size > 0) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
  }

  /** New work may be in the frontier (settled links, retries, released tasks). */
  frontierChanged(): void {
    this.frontierEmptyUntil = 0;
    this.pump();
  }

  /** Hand out every task that politeness and credit allow; refill the buffer when it runs low. */
  pump(): void {
    if (this.closed) return;
    // Hops first, and while draining too: they belong to tasks already running. A hop whose task
    // ended is dropped here, which frees its host for new tasks.
    this.hops.serve();
    if (!this.dispatching) return;
    const now = this.options.clock();
    const batches = new Map<CrawlerSession, WireTask[]>();
    let wakeInMs = Infinity;
    const allowed = this.options.canDispatch?.() ?? true;
    const needsRender = this.options.needsRender?.() ?? null;
    // Once a static crawler finds nothing it may take, no static crawler will in this pump.
    let staticDone = false;
    // Sessions that found nothing only because they hold a suspect: others may take one.
    const passed = new Set<string>();
    while (allowed) {
      const session = this.nextSessionWithCredit(
        (s) => passed.has(s.id) || (staticDone && s.canRender !== true),
      );
      if (!session) break;
      const own = this.options.hold?.nextTask(session.id, now);
      if (own) {
        session.credit -= 1;
        let batch = batches.get(session);
        if (!batch) batches.set(session, (batch = []));
        batch.push(own);
        continue;
      }
      const { lease, wakeInMs: wait, suspect } = this.takeFor(session, needsRender, now);
      if (!lease) {
        wakeInMs = Math.min(wakeInMs, wait);
        if (this.suspects.size > 0 && this.inFlight.holdsSuspect(session.id)) {
          passed.add(session.id);
          continue;
        }
        if (session.canRender === true || needsRender === null) break;
        staticDone = true;
        this.warnIfNoRenderer(needsRender);
        continue;
      }
      if (this.options.intercept?.(lease)) continue;
      // A lease lost with its broker connection comes back as a new delivery: fetching it now would
      // only make a duplicate.
      if (this.options.frontier.isLeaseLive?.(lease) === false) continue;
      // A second copy of a task in flight (a redelivery) takes the first one's place (FlightBook).
      const reportStart = this.options.gate.start(lease.host, now);
      session.credit -= 1;
      const render = session.canRender === true && needsRender?.(lease) === true;
      const validators = render ? null : (this.options.validatorsOf?.(lease) ?? null);
      const task = wireTaskOf(lease, {
        render,
        reportStart,
        hopGrants: reportStart || this.options.hold?.checksHops?.(lease) === true,
        jobId: this.options.jobOf?.(lease.runId) ?? DEFAULT_JOB_ID,
        ...(validators ? { validators } : {}),
        cookies: this.options.cookiesOf?.(lease),
      });
      this.inFlight.add(
        {
          lease,
          sessionId: session.id,
          sentAt: now,
          startPending: reportStart,
          paced: reportStart,
          working: false,
          suspect,
          ...(task.captureId ? { captureId: task.captureId } : {}),
        },
        now,
      );
      let batch = batches.get(session);
      if (!batch) batches.set(session, (batch = []));
      batch.push(task);
    }
    for (const [session, tasks] of batches) {
      this.options.beforeSend?.(session, tasks);
      session.sendTasks(tasks);
    }
    if (Number.isFinite(wakeInMs)) this.wakeIn(wakeInMs);
    // Tasks no connected crawler can take (they need a browser and no render crawler is here)
    // neither count as buffered work nor are leased again: static work keeps flowing past them.
    const stranded = this.strandedHosts(needsRender);
    const usable = this.buffer.size - stranded.tasks;
    // Held back (outcomes cannot be made durable): leasing more would only fill the buffer, and on
    // a full disk each lease fails too. Idle (no crawler for a while): nothing is leased to wait here.
    if (
      allowed &&
      !this.idle &&
      usable <= this.refillBelow() &&
      this.buffer.size < this.options.bufferSize * 2 &&
      now >= this.frontierEmptyUntil
    ) {
      void this.refill(usable, stranded.hosts);
    }
  }

  /**
   * The buffer is topped up once this many of its tasks or fewer are usable: as soon as a small
   * batch has gone out, not only when half of it has. A lease skips the hosts whose per-host buffer
   * is full, so a top-up goes to the hosts that just sent tasks. Waiting for half the buffer to
   * drain let a host whose share of the last lease was small run dry and idle until the next lease
   * (`npm run bench -- --hosts`: 128 polite hosts at 0.74 of the ceiling; refilling after a
   * sixteenth, 0.85). The batch keeps leases few: one per ~125 tasks sent with the default 2,000.
   */
  private refillBelow(): number {
    const { bufferSize } = this.options;
    return bufferSize - Math.max(1, Math.floor(bufferSize / 16));
  }

  /**
   * How long a host's further tasks would wait: politeness for those buffered, and a robots.txt
   * hold (a host whose robots.txt is being retried waits for that; one being read, not long).
   */
  private hostWaitEstimate(host: string, now: number): number {
    const politeness = this.options.gate.estimateWaitMs(host, now, this.buffer.countOf(host));
    const next = this.buffer.peek(host);
    const held = next && this.options.hold ? this.options.hold.waitMs(next, now) : 0;
    return Math.max(politeness, Number.isFinite(held) ? held : 0);
  }

  private strandedHosts(needsRender: RenderPredicate | null): { hosts: string[]; tasks: number } {
    if (needsRender === null || [...this.sessions.values()].some((s) => s.canRender === true)) {
      return { hosts: [], tasks: 0 };
    }
    return this.buffer.hostsWhoseNext(needsRender);
  }

  /**
   * A static crawler takes only tasks that need no browser, passing over hosts that wait for one;
   * a render crawler takes those first, then anything, so static work never waits for rendering.
   */
  private takeFor(
    session: CrawlerSession,
    needsRender: RenderPredicate | null,
    now: number,
  ): { lease: Lease | null; wakeInMs: number; suspect: boolean } {
    if (this.suspects.size > 0 && !this.inFlight.holdsSuspect(session.id)) {
      const suspect = this.takeFrom(this.suspects, session, needsRender, now);
      if (suspect.lease) return { lease: suspect.lease, wakeInMs: suspect.wakeInMs, suspect: true };
      const other = this.takeFrom(this.buffer, session, needsRender, now);
      return { lease: other.lease, wakeInMs: Math.min(suspect.wakeInMs, other.wakeInMs), suspect: false };
    }
    // No spread: on Node 20 a property written after one in a literal goes through V8's runtime.
    const taken = this.takeFrom(this.buffer, session, needsRender, now);
    return { lease: taken.lease, wakeInMs: taken.wakeInMs, suspect: false };
  }

  private takeFrom(
    buffer: TaskBuffer,
    session: CrawlerSession,
    needsRender: RenderPredicate | null,
    now: number,
  ): { lease: Lease | null; wakeInMs: number } {
    const gate = this.hostWait;
    if (needsRender === null) return buffer.take(gate, now);
    if (session.canRender !== true) return buffer.take(gate, now, (lease) => !needsRender(lease));
    const rendered = buffer.take(gate, now, needsRender);
    if (rendered.lease) return rendered;
    const any = buffer.take(gate, now);
    return { lease: any.lease, wakeInMs: Math.min(rendered.wakeInMs, any.wakeInMs) };
  }

  /**
   * Render tasks wait while no render crawler is connected: after 30 s of that (crawlers start at
   * their own pace), say so once a minute.
   */
  private warnIfNoRenderer(needsRender: RenderPredicate): void {
    const now = this.options.clock();
    if ([...this.sessions.values()].some((s) => s.canRender === true)) {
      this.noRendererSince = null;
      return;
    }
    this.noRendererSince ??= now;
    if (now - this.noRendererSince < 30_000 || now - this.lastNoRendererWarning < 60_000) return;
    this.lastNoRendererWarning = now;
    if (!this.buffer.all().some(needsRender)) return;
    this.options.logger.warn(
      'tasks that need rendering are waiting, and no render-capable crawler is connected (ackcrawl crawler --render)',
    );
  }

  private nextSessionWithCredit(skip: (session: CrawlerSession) => boolean): CrawlerSession | null {
    const list = [...this.sessions.values()];
    for (let i = 0; i < list.length; i++) {
      const session = list[(this.sessionCursor + i) % list.length] as CrawlerSession;
      if (skip(session)) continue;
      if (session.credit > 0) {
        this.sessionCursor = (this.sessionCursor + i + 1) % list.length;
        return session;
      }
    }
    return null;
  }

  /**
   * Pumps again in `ms`, or sooner if a wake is due sooner already. A wake due later is moved up:
   * a host whose slot or delay frees before the wake the timer holds (its outcome came back, a
   * refill brought its tasks) is served on time, not at another host's time.
   */
  private wakeIn(ms: number): void {
    const due = performance.now() + Math.max(1, ms);
    if (this.wakeTimer) {
      if (this.wakeDue <= due) return;
      clearTimeout(this.wakeTimer);
    }
    this.wakeDue = due;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.pump();
      },
      Math.max(1, ms),
    );
  }

  private async refill(usable: number, stranded: readonly string[]): Promise<void> {
    if (this.refilling || this.closed || !this.dispatching) return;
    this.refilling = true;
    try {
      const { bufferSize } = this.options;
      const want = Math.min(bufferSize - usable, bufferSize * 2 - this.buffer.size);
      const now = this.options.clock();
      const waitingForBrowser = new Set(stranded);
      const leases = await this.options.frontier.lease(want, {
        excludeHosts: [...this.buffer.fullHosts(), ...stranded],
        leaseMs: this.options.leaseMs,
        hostWaitMs: (host) =>
          waitingForBrowser.has(host) ? STRANDED_WAIT_MS : this.hostWaitEstimate(host, now),
      });
      const crashes = this.options.crashes;
      const dispatchable = this.options.dispatchable;
      const refused: Lease[] = [];
      for (const lease of leases) {
        if (dispatchable && !dispatchable(lease)) refused.push(lease);
        else (crashes?.isSuspect(lease) ? this.suspects : this.buffer).add(lease);
      }
      if (refused.length > 0) await this.handBackRefused(refused);
      // Nothing ready: look again on the next tick rather than spinning on the frontier. Only
      // leases of runs that do not dispatch here: wait longer before asking again.
      if (leases.length === 0) this.frontierEmptyUntil = this.options.clock() + 250;
      else if (refused.length === leases.length) this.frontierEmptyUntil = this.options.clock() + 1000;
    } catch (err) {
      this.options.logger.error({ err }, 'frontier lease failed; trying again shortly');
      this.frontierEmptyUntil = this.options.clock() + 1000;
    } finally {
      this.refilling = false;
    }
    if (this.bufferedCount > 0) this.pump();
  }

  private async handBackRefused(leases: Lease[]): Promise<void> {
    const runs = [...new Set(leases.map((l) => l.runId))];
    this.options.logger.debug(
      { tasks: leases.length, runs },
      'leased tasks of runs not dispatching here; handed back',
    );
    await this.options.frontier.release(leases);
  }

  /**
   * Buffered tasks `test` accepts go back to the frontier at once, no attempt counted (their run
   * was paused or cancelled); tasks in flight are left to finish. Resolves with how many went back.
   */
  async releaseBuffered(test: (lease: Lease) => boolean): Promise<number> {
    const back = [...this.buffer.removeWhere(test), ...this.suspects.removeWhere(test)];
    if (back.length > 0) await this.options.frontier.release(back);
    return back.length;
  }

  /** Tasks in flight per run. */
  inFlightByRun(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const flight of this.inFlight.values()) {
      const runId = flight.lease.runId;
      counts.set(runId, (counts.get(runId) ?? 0) + 1);
    }
    return counts;
  }

  /** The run's tasks in flight and buffered here, by host (a scan of what is held: bounded). */
  heldByHost(runId: string): Map<string, { inFlight: number; queued: number }> {
    const byHost = new Map<string, { inFlight: number; queued: number }>();
    const entry = (host: string) => {
      let counts = byHost.get(host);
      if (!counts) byHost.set(host, (counts = { inFlight: 0, queued: 0 }));
      return counts;
    };
    for (const flight of this.inFlight.values()) {
      if (flight.lease.runId === runId) entry(flight.lease.host).inFlight += 1;
    }
    for (const lease of [...this.buffer.all(), ...this.suspects.all()]) {
      if (lease.runId === runId) entry(lease.host).queued += 1;
    }
    return byHost;
  }

  /** Tasks in flight longer than `maxAgeMs` (a hung crawler): forget them and put them back. */
  async expireInFlight(maxAgeMs: number): Promise<number> {
    const expired = this.inFlight.endOlderThan(maxAgeMs, this.options.clock()).map((f) => f.lease);
    if (expired.length > 0) {
      this.options.logger.warn({ tasks: expired.length }, 'tasks in flight too long; handing them back');
      await this.options.frontier.release(expired);
      this.frontierChanged();
    }
    return expired.length;
  }

  /** The task of `url` (of `runId`, if given) buffered here or in flight (a linear scan: for diagnostics only). */
  locate(url: string, runId?: string): Located | null {
    const of = (lease: Lease): boolean => lease.url === url && (runId === undefined || lease.runId === runId);
    for (const flight of this.inFlight.values()) {
      if (of(flight.lease)) {
        return {
          where: 'in-flight',
          lease: flight.lease,
          sessionId: flight.sessionId,
          sentAt: flight.sentAt,
        };
      }
    }
    const lease = [...this.buffer.all(), ...this.suspects.all()].find(of);
    return lease ? { where: 'buffer', lease } : null;
  }

  /** Every lease this scheduler holds, to renew. */
  heldLeases(): Lease[] {
    return [...this.buffer.all(), ...this.suspects.all(), ...[...this.inFlight.values()].map((f) => f.lease)];
  }

  private armIdle(): void {
    if (this.idleTimer || this.idle || this.closed) return;
    const ms = this.options.idleHandBackMs ?? DEFAULT_IDLE_HAND_BACK_MS;
    this.idleTimer = setTimeout(() => void this.goIdle(), ms);
    this.idleTimer.unref();
  }

  /**
   * No crawler for a while: the frontier stops taking work first (so what goes back is not
   * delivered here again), then the buffer goes back. A crawler arriving meanwhile turns demand on
   * again after this, in call order.
   */
  private async goIdle(): Promise<void> {
    this.idleTimer = null;
    if (this.closed || this.sessions.size > 0) return;
    this.idle = true;
    this.setDemand(false);
    const back = [...this.buffer.drain(), ...this.suspects.drain()];
    this.options.logger.info(
      { handedBack: back.length },
      'no crawler connected: handing back buffered work and taking no more until one connects',
    );
    try {
      if (back.length > 0) await this.options.frontier.release(back);
    } catch (err) {
      // Their leases expire and the frontier hands them out again.
      this.options.logger.warn({ err, tasks: back.length }, 'could not hand back buffered work');
    }
  }

  /** The frontier weighs this scheduler's share of the hosts by its crawlers' capacity. */
  private tellCapacity(): void {
    let slots = 0;
    for (const session of this.sessions.values()) slots += session.slots ?? 1;
    this.options.frontier.setCapacity?.(slots);
  }

  private setDemand(wanted: boolean): void {
    this.options.frontier.setDemand?.(wanted).catch((err: unknown) => {
      this.options.logger.warn({ err, demand: wanted }, 'could not tell the frontier about crawler demand');
    });
  }

  /** Stop dispatching; hand back everything buffered or in flight. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.hops.close();
    const back = [
      ...this.buffer.drain(),
      ...this.suspects.drain(),
      ...this.inFlight.clear().map((f) => f.lease),
    ];
    if (back.length > 0) await this.options.frontier.release(back);
  }
}
