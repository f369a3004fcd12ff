import { setMaxListeners } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { isCertificateError } from '../../shared/config/tls.js';
import type { Logger } from '../../shared/logger.js';
import type { HopAnswer } from './fetch/redirect-spacing.js';
import {
  MAX_RUNS_PER_SESSION,
  schedulerMessageSchema,
  type CrawlerTextMessage,
  type FetchSettings,
  type WireTask,
} from '../../shared/protocol/messages.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import { frameMaskFor } from './frame-mask.js';
import { TurnWrites } from './turn-writes.js';

/** Abort listeners one task may hold on its connection's signal at once (fetch, render, slot wait). */
const LISTENERS_PER_TASK = 3;

export interface SchedulerClientOptions {
  url: string;
  /** Sent on the upgrade as `Authorization: Bearer <token>`. */
  token: string;
  /** CAs trusted for a wss:// URL (shared/config/tls.ts readTlsCa); absent: Node's defaults. */
  ca?: string[] | undefined;
  crawlerId: string;
  /** Tasks worked on at once. */
  concurrency: number;
  /** Announced in the hello, e.g. `render`. */
  capabilities?: string[];
  logger: Logger;
  /**
   * Does the task; calls `started` when its request goes out (sent on only if the task asked).
   * `signal` is aborted when the connection that brought the task ends: the scheduler has handed
   * the task back, so its fetch should stop. `hop` asks the scheduler to let a redirect back to
   * the task's host go to a URL (tasks with `hopGrants`), and resolves with its answer: `granted`,
   * or `denied` (robots.txt disallows the URL); it never resolves once the connection is gone (the
   * signal says so).
   * Resolves with its outcome frame (binary), or a text message for a `robots` task. Should not
   * throw; when it does, `failed` says what to send instead.
   */
  work: (
    task: WireTask,
    settings: FetchSettings,
    started: () => void,
    signal: AbortSignal,
    hop: (url: string) => Promise<HopAnswer>,
  ) => Promise<Buffer | string>;
  /**
   * The outcome of a task whose `work` threw or rejected (a bug): a failed outcome, so the task
   * follows the retry policy instead of taking the process down. Throwing here hands it back.
   */
  failed: (task: WireTask, err: unknown) => Buffer | string;
  /** Called when the scheduler refuses this crawler for good (HTTP 401/403 at the upgrade, wrong protocol). */
  onFatal?: (code: string, message: string) => void;
}

/**
 * The crawler's side of the WebSocket: hello, credit, tasks, outcomes, heartbeats, and reconnection
 * with backoff. Credit is what this process asks for: it never holds more tasks than concurrency
 * plus a small prefetch. When the connection drops, outcomes of its tasks are dropped too: the
 * scheduler has already handed those tasks back.
 *
 * Before it starts tasks it says so (`working`): a task in flight on a crawler that then dies counts
 * against the task only if it was being worked on (docs/protocol.md). A drain (the scheduler's
 * `drain`, or close() on SIGTERM) asks for no more work, hands back the tasks not started
 * (`release`), lets the running ones finish and deliver their outcomes, then says `bye`.
 */
export class SchedulerClient {
  private ws: WebSocket | null = null;
  private epoch = 0;
  /** Aborted when the current connection ends: its running tasks' fetches stop. */
  private withdrawn = new AbortController();
  /** The welcome's fetch settings: the default run's, and those of tasks naming no known run. */
  private settings: FetchSettings | null = null;
  /** Fetch settings per run (`run` messages) of the current connection, oldest first. */
  private runSettings = new Map<string, FetchSettings>();
  /** Tasks of the current connection not started yet. */
  private queue: WireTask[] = [];
  /** Tasks running, of any connection: what `concurrency` bounds. */
  private running = 0;
  /** Tasks of the current connection running: their outcomes are still wanted. */
  private readonly live = new Set<string>();
  /** Tasks of this connection waiting for the scheduler's `hop-granted`, by task id. */
  private readonly hopWaiters = new Map<string, (answer: HopAnswer) => void>();
  private owed = 0;
  private creditTimer: NodeJS.Immediate | null = null;
  /** A turn's messages go out in one write, the turn's credit with them. */
  private readonly turnWrites = new TurnWrites(() => this.flushCredit());
  private heartbeat: NodeJS.Timeout | null = null;
  private lastHeard = Date.now();
  private backoffMs = 100;
  /** The connection (epoch) being drained: no credit, new tasks handed back, bye once idle. */
  private drainingEpoch = 0;
  private byeSentEpoch = 0;
  private stopping = false;
  private closing: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  private readonly prefetch: number;
  /** Zero masks where nothing between us and the scheduler can read the frames (frame-mask.ts). */
  private readonly generateMask: ((mask: Buffer) => void) | undefined;

  constructor(private readonly options: SchedulerClientOptions) {
    this.prefetch = Math.max(2, Math.ceil(options.concurrency / 2));
    this.generateMask = frameMaskFor(options.url);
  }

  start(): void {
    this.connect();
  }

  private connect(): void {
    if (this.stopping) return;
    const epoch = ++this.epoch;
    this.withdrawn = new AbortController();
    // Every running task of the connection listens to its signal (its fetch, or its render and the
    // wait for a browser slot): Node's default of 10 listeners would warn of a leak at the 11th.
    setMaxListeners(LISTENERS_PER_TASK * (this.options.concurrency + this.prefetch), this.withdrawn.signal);
    const ws = new WebSocket(this.options.url, {
      perMessageDeflate: false,
      maxPayload: 64 * 1024 * 1024,
      headers: { authorization: `Bearer ${this.options.token}` },
      ...(this.options.ca ? { ca: this.options.ca } : {}),
      ...(this.generateMask ? { generateMask: this.generateMask } : {}),
    });
    this.ws = ws;
    ws.on('unexpected-response', (_req, res) => this.onRefused(ws, epoch, res));
    ws.on('open', () => {
      this.lastHeard = Date.now();
      ws.send(
        JSON.stringify({
          type: 'hello',
          protocol: PROTOCOL_VERSION,
          crawlerId: this.options.crawlerId,
          pid: process.pid,
          concurrency: this.options.concurrency,
          ...(this.options.capabilities?.length ? { capabilities: this.options.capabilities } : {}),
        }),
      );
    });
    ws.on('message', (data, isBinary) => {
      this.lastHeard = Date.now();
      if (!isBinary) this.onMessage(String(data), epoch);
    });
    ws.on('close', (code, reason) => this.onClose(epoch, code, String(reason)));
    ws.on('error', (err) => {
      // An untrusted certificate does not get right by retrying: say so once and stop.
      if (isCertificateError(err) && epoch === this.epoch && !this.stopping) {
        this.stopping = true;
        this.options.onFatal?.(
          'TLS_UNTRUSTED',
          `the scheduler's certificate is not trusted (${(err as NodeJS.ErrnoException).code}): give its CA in ACKCRAWL_TLS_CA`,
        );
        return;
      }
      this.options.logger.warn({ err: err.message }, 'scheduler connection error');
    });
  }

  /**
   * The upgrade got an HTTP answer instead of a WebSocket: 401/403 end this crawler (a wrong
   * token does not get right by retrying), anything else (429/503 over the connection limits)
   * is retried after its Retry-After.
   */
  private onRefused(ws: WebSocket, epoch: number, res: IncomingMessage): void {
    res.resume();
    const status = res.statusCode ?? 0;
    ws.terminate();
    if (epoch !== this.epoch) return;
    if (status === 401 || status === 403) {
      this.stopping = true;
      this.options.onFatal?.(
        status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN',
        status === 401
          ? 'the scheduler refused the token (HTTP 401): check ACKCRAWL_TOKEN or the token file'
          : 'the scheduler refused the connection (HTTP 403): it does not answer the host of ACKCRAWL_SCHEDULER_URL (see its ACKCRAWL_ALLOWED_HOSTS)',
      );
      return;
    }
    const retryAfterS = Number(res.headers['retry-after']);
    if (Number.isFinite(retryAfterS) && retryAfterS > 0) {
      this.backoffMs = Math.max(this.backoffMs, Math.min(retryAfterS * 1000, 30_000));
    }
  }

  private get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /**
   * `written`, when given, runs once the message is handed to the kernel, with true; or with false
   * when it never left (no connection, or the connection broke before the write).
   */
  private sendText(message: CrawlerTextMessage, written?: (sent: boolean) => void): void {
    if (this.open && this.ws) {
      this.turnWrites.hold(this.ws);
      this.ws.send(JSON.stringify(message), written && ((err) => written(!err)));
    } else written?.(false);
  }

  private onMessage(text: string, epoch: number): void {
    let message;
    try {
      message = schedulerMessageSchema.parse(JSON.parse(text));
    } catch (err) {
      this.options.logger.warn({ err: String(err) }, 'unreadable message from the scheduler; ignored');
      return;
    }
    switch (message.type) {
      case 'welcome':
        this.settings = message.fetch;
        this.runSettings = new Map();
        this.startHeartbeat(message.heartbeatMs, epoch);
        this.options.logger.info({ sessionId: message.sessionId }, 'connected to the scheduler');
        this.owed = 0;
        // Slots still busy with a previous connection's tasks are not asked for again (each asks
        // for its slot when it ends).
        this.grant(Math.max(0, this.options.concurrency + this.prefetch - this.running - this.queue.length));
        return;
      case 'tasks':
        // Work arrives: this connection is a useful one, reconnect quickly if it drops.
        this.backoffMs = 100;
        if (this.drainingEpoch === epoch) {
          // Sent before the scheduler saw that this crawler drains: not started, so handed back.
          this.release(message.items.map((t) => t.taskId));
          return;
        }
        for (const task of message.items) this.queue.push(task);
        this.runQueued(epoch);
        return;
      case 'error':
        this.options.logger.error(
          { code: message.code, message: message.message },
          'scheduler rejected a message',
        );
        if (message.fatal) {
          this.options.onFatal?.(message.code, message.message);
        }
        return;
      case 'settings':
        this.settings = message.fetch;
        return;
      case 'run':
        this.runSettings.delete(message.runId);
        this.runSettings.set(message.runId, message.fetch);
        if (this.runSettings.size > MAX_RUNS_PER_SESSION) {
          const oldest = this.runSettings.keys().next().value;
          if (oldest !== undefined) this.runSettings.delete(oldest);
        }
        return;
      case 'drain':
        this.options.logger.info('scheduler asked to drain');
        this.drain(epoch);
        return;
      case 'heartbeat':
        return;
      case 'hop-granted':
      case 'hop-denied': {
        const answer = this.hopWaiters.get(message.taskId);
        this.hopWaiters.delete(message.taskId);
        answer?.(message.type === 'hop-granted' ? 'granted' : 'denied');
        return;
      }
    }
  }

  /** Hand tasks back to the scheduler: not started here, they cost no attempt. */
  private release(taskIds: string[]): void {
    if (taskIds.length === 0) return;
    this.sendText({ type: 'release', taskIds });
  }

  /** Take no more work on this connection; hand back what is queued; bye once nothing runs. */
  private drain(epoch: number): void {
    if (epoch !== this.epoch || this.drainingEpoch === epoch) return;
    this.drainingEpoch = epoch;
    this.owed = 0;
    this.release(this.queue.map((t) => t.taskId));
    this.queue = [];
    this.byeWhenIdle();
  }

  private byeWhenIdle(): void {
    const epoch = this.epoch;
    if (this.drainingEpoch !== epoch || this.live.size > 0 || this.byeSentEpoch === epoch) return;
    this.byeSentEpoch = epoch;
    // The scheduler closes the connection on bye; nothing it sent this connection is still here.
    this.sendText({ type: 'bye' });
  }

  private runQueued(epoch: number): void {
    const defaults = this.settings;
    if (!defaults || epoch !== this.epoch || this.drainingEpoch === epoch) return;
    const starting: { task: WireTask; settings: FetchSettings }[] = [];
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const task = this.queue.shift() as WireTask;
      this.running += 1;
      this.live.add(task.taskId);
      // The run's settings as they are when the task starts (a `run` message precedes its tasks).
      const settings = (task.runId !== undefined && this.runSettings.get(task.runId)) || defaults;
      starting.push({ task, settings });
    }
    if (starting.length === 0) return;
    // Said before any of them starts, and they start only once it has left this process (it may
    // wait behind a large outcome frame): a task that takes this process down is then known to
    // have been worked on when it went, whatever kills it, even a synchronous hang.
    // A task whose `working` could not leave, or whose connection closed meanwhile, is not
    // started: the scheduler handed it back when the connection dropped, and it may already be on
    // another crawler, or due at its host after a request another crawler is sending.
    this.sendText({ type: 'working', taskIds: starting.map((s) => s.task.taskId) }, (sent) => {
      for (const { task, settings } of starting) {
        if (sent && epoch === this.epoch && this.live.has(task.taskId)) this.startTask(task, settings, epoch);
        else this.finish(task, epoch, null);
      }
    });
  }

  private startTask(task: WireTask, settings: FetchSettings, epoch: number): void {
    const started = (): void => {
      if (task.reportStart && epoch === this.epoch && this.live.has(task.taskId)) {
        this.sendText({ type: 'started', taskId: task.taskId });
      }
    };
    const hop = (url: string): Promise<HopAnswer> =>
      new Promise<HopAnswer>((resolve) => {
        if (!task.hopGrants || epoch !== this.epoch || !this.live.has(task.taskId)) return;
        this.hopWaiters.set(task.taskId, resolve);
        this.sendText({ type: 'hop', taskId: task.taskId, url });
      });
    let work: Promise<Buffer | string>;
    try {
      work = this.options.work(task, settings, started, this.withdrawn.signal, hop);
    } catch (err) {
      work = Promise.reject(err);
    }
    void work.then(
      (frame) => this.finish(task, epoch, frame),
      (err: unknown) => this.finish(task, epoch, this.failedFrame(task, err)),
    );
  }

  /** What to send for a task whose work failed unexpectedly; null: hand it back. */
  private failedFrame(task: WireTask, err: unknown): Buffer | string | null {
    this.options.logger.error(
      { err, taskId: task.taskId, url: task.url },
      'task failed unexpectedly; reporting it as a failure',
    );
    try {
      return this.options.failed(task, err);
    } catch (failedErr) {
      this.options.logger.error(
        { err: failedErr, taskId: task.taskId },
        'could not report it; handing it back',
      );
      return null;
    }
  }

  private finish(task: WireTask, epoch: number, frame: Buffer | string | null): void {
    this.running -= 1;
    if (epoch === this.epoch) this.hopWaiters.delete(task.taskId);
    // Only this connection's tasks are delivered: an earlier connection's were handed back by the
    // scheduler when it dropped, and their outcomes would be refused as stale.
    if (epoch === this.epoch && this.live.delete(task.taskId) && this.open) {
      if (frame === null) this.release([task.taskId]);
      else if (this.ws) {
        this.turnWrites.hold(this.ws);
        this.ws.send(frame);
      }
    }
    // A slot is free, whichever connection its task came on.
    this.grant(1);
    this.runQueued(this.epoch);
    this.byeWhenIdle();
    if (this.live.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Ask for `n` more tasks, batched into one credit message per tick. */
  private grant(n: number): void {
    if (this.stopping || this.drainingEpoch === this.epoch || n <= 0) return;
    this.owed += n;
    if (this.creditTimer) return;
    this.creditTimer = setImmediate(() => this.flushCredit());
  }

  /** Sends the credit owed, once per turn: at the end of it, or with the turn's held writes. */
  private flushCredit(): void {
    if (this.creditTimer) clearImmediate(this.creditTimer);
    this.creditTimer = null;
    if (this.owed > 0 && this.open && !this.stopping && this.drainingEpoch !== this.epoch) {
      this.sendText({ type: 'credit', n: this.owed });
      this.owed = 0;
    }
  }

  private startHeartbeat(heartbeatMs: number, epoch: number): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (epoch !== this.epoch || !this.open) return;
      if (Date.now() - this.lastHeard > heartbeatMs * 3) {
        this.options.logger.warn('scheduler silent for three heartbeats; reconnecting');
        this.ws?.terminate();
        return;
      }
      this.sendText({ type: 'heartbeat', t: Date.now() });
    }, heartbeatMs);
  }

  private onClose(epoch: number, code: number, reason: string): void {
    if (epoch !== this.epoch) return;
    this.queue = [];
    this.live.clear();
    this.hopWaiters.clear();
    // The scheduler handed back what this connection brought: what still runs stops (a request
    // left running would hold its host's server while another crawler may be sent the task).
    this.withdrawn.abort();
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.stopping) return;
    this.options.logger.info(
      { code, reason, retryInMs: this.backoffMs },
      'scheduler connection closed; reconnecting',
    );
    // Not unref'd: with the socket gone it is all that keeps the crawler alive, and a crawler
    // whose scheduler is away (restarting, moved) waits for it; it exits only when told to.
    setTimeout(() => this.connect(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, 5_000);
  }

  /**
   * Graceful stop (SIGTERM), safe to call twice: stop asking for work, hand back the tasks not
   * started, finish the running ones and deliver their outcomes within `deadlineMs`, hand back
   * whatever still runs then, say bye and close. Nothing is re-fetched that was finished.
   */
  close(deadlineMs = 15_000): Promise<void> {
    return (this.closing ??= (async () => {
      const epoch = this.epoch;
      this.drain(epoch);
      this.stopping = true;
      if (this.live.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs))),
        ]);
        clearTimeout(timer);
      }
      if (epoch === this.epoch && this.live.size > 0) {
        this.options.logger.warn(
          { tasks: this.live.size },
          'drain deadline passed; handing back running tasks',
        );
        this.release([...this.live]);
        this.live.clear();
      }
      this.byeWhenIdle();
      if (this.heartbeat) clearInterval(this.heartbeat);
      const ws = this.ws;
      if (!ws || ws.readyState === WebSocket.CLOSED) return;
      if (ws.readyState !== WebSocket.OPEN) {
        ws.terminate();
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        ws.close(1000, 'crawler closing');
      });
    })());
  }
}
