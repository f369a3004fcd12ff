import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { Logger } from '../../shared/logger.js';
import { schedulerMessageSchema, type FetchSettings, type WireTask } from '../../shared/protocol/messages.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';

export interface SchedulerClientOptions {
  url: string;
  /** Sent on the upgrade as `Authorization: Bearer <token>`. */
  token: string;
  crawlerId: string;
  /** Tasks worked on at once. */
  concurrency: number;
  /** Announced in the hello, e.g. `render`. */
  capabilities?: string[];
  logger: Logger;
  /**
   * Does the task; calls `started` when its request goes out (sent on only if the task asked).
   * Resolves with its outcome frame (binary), or a text message for a `robots` task. Must not throw.
   */
  work: (task: WireTask, settings: FetchSettings, started: () => void) => Promise<Buffer | string>;
  /** Called when the scheduler refuses this crawler for good (HTTP 401/403 at the upgrade, wrong protocol). */
  onFatal?: (code: string, message: string) => void;
}

/**
 * The crawler's side of the WebSocket: hello, credit, tasks, outcomes, heartbeats, and reconnection
 * with backoff. Credit is what this process asks for: it never holds more tasks than concurrency
 * plus a small prefetch. When the connection drops, outcomes of its tasks are dropped too: the
 * scheduler has already handed those tasks back.
 */
export class SchedulerClient {
  private ws: WebSocket | null = null;
  private epoch = 0;
  private settings: FetchSettings | null = null;
  private queue: WireTask[] = [];
  private running = 0;
  private owed = 0;
  private creditTimer: NodeJS.Immediate | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private lastHeard = Date.now();
  private backoffMs = 100;
  private stopping = false;
  private idleWaiters: (() => void)[] = [];
  private readonly prefetch: number;

  constructor(private readonly options: SchedulerClientOptions) {
    this.prefetch = Math.max(2, Math.ceil(options.concurrency / 2));
  }

  start(): void {
    this.connect();
  }

  private connect(): void {
    if (this.stopping) return;
    const epoch = ++this.epoch;
    const ws = new WebSocket(this.options.url, {
      perMessageDeflate: false,
      maxPayload: 64 * 1024 * 1024,
      headers: { authorization: `Bearer ${this.options.token}` },
    });
    this.ws = ws;
    ws.on('unexpected-response', (_req, res) => this.onRefused(ws, epoch, res));
    ws.on('open', () => {
      this.backoffMs = 100;
      this.lastHeard = Date.now();
      ws.send(
        JSON.stringify({
          type: 'hello',
          protocol: PROTOCOL_VERSION,
          crawlerId: this.options.crawlerId,
          pid: process.pid,
          ...(this.options.capabilities?.length ? { capabilities: this.options.capabilities } : {}),
        }),
      );
    });
    ws.on('message', (data, isBinary) => {
      this.lastHeard = Date.now();
      if (!isBinary) this.onMessage(String(data), epoch);
    });
    ws.on('close', (code, reason) => this.onClose(epoch, code, String(reason)));
    ws.on('error', (err) => this.options.logger.warn({ err: err.message }, 'scheduler connection error'));
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
        this.startHeartbeat(message.heartbeatMs, epoch);
        this.options.logger.info({ sessionId: message.sessionId }, 'connected to the scheduler');
        this.owed = 0;
        // Slots still busy with a previous connection's tasks are not asked for again.
        this.grant(Math.max(0, this.options.concurrency + this.prefetch - this.running - this.queue.length));
        return;
      case 'tasks':
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
      case 'drain':
        this.options.logger.info('scheduler asked to drain');
        return;
      case 'heartbeat':
        return;
    }
  }

  private runQueued(epoch: number): void {
    const settings = this.settings;
    if (!settings) return;
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const task = this.queue.shift() as WireTask;
      this.running += 1;
      const started = (): void => {
        if (task.reportStart && epoch === this.epoch && this.ws?.readyState === WebSocket.OPEN) {
          this.ws.send(JSON.stringify({ type: 'started', taskId: task.taskId }));
        }
      };
      void this.options.work(task, settings, started).then((frame) => {
        this.running -= 1;
        if (epoch === this.epoch && this.ws?.readyState === WebSocket.OPEN) {
          this.ws.send(frame);
          this.grant(1);
        }
        this.runQueued(this.epoch);
        if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      });
    }
  }

  /** Ask for `n` more tasks, batched into one credit message per tick. */
  private grant(n: number): void {
    if (this.stopping || n <= 0) return;
    this.owed += n;
    if (this.creditTimer) return;
    this.creditTimer = setImmediate(() => {
      this.creditTimer = null;
      if (this.owed > 0 && this.ws?.readyState === WebSocket.OPEN && !this.stopping) {
        this.ws.send(JSON.stringify({ type: 'credit', n: this.owed }));
        this.owed = 0;
      }
    });
  }

  private startHeartbeat(heartbeatMs: number, epoch: number): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (epoch !== this.epoch || this.ws?.readyState !== WebSocket.OPEN) return;
      if (Date.now() - this.lastHeard > heartbeatMs * 3) {
        this.options.logger.warn('scheduler silent for three heartbeats; reconnecting');
        this.ws.terminate();
        return;
      }
      this.ws.send(JSON.stringify({ type: 'heartbeat', t: Date.now() }));
    }, heartbeatMs);
  }

  private onClose(epoch: number, code: number, reason: string): void {
    if (epoch !== this.epoch) return;
    this.queue = [];
    this.settings = this.settings ?? null;
    if (this.stopping) return;
    this.options.logger.info(
      { code, reason, retryInMs: this.backoffMs },
      'scheduler connection closed; reconnecting',
    );
    setTimeout(() => this.connect(), this.backoffMs).unref();
    this.backoffMs = Math.min(this.backoffMs * 2, 5_000);
  }

  /**
   * Stop asking for work, finish the tasks already started and deliver their outcomes (up to the
   * deadline), then close. Queued tasks not yet started are handed back by the scheduler.
   */
  async close(deadlineMs = 10_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.queue = [];
    if (this.running > 0) {
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
        new Promise((resolve) => setTimeout(resolve, deadlineMs).unref()),
      ]);
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: 'bye' }));
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.close(1000, 'crawler closing');
        setTimeout(resolve, 2000).unref();
      });
    }
  }
}
