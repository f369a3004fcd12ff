import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { AppError, ProtocolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import {
  crawlerTextMessageSchema,
  type FetchSettings,
  type Hello,
  type RobotsAnswer,
  type SchedulerMessage,
  type WireTask,
} from '../../shared/protocol/messages.js';
import { MAX_TEXT_MESSAGE_BYTES } from '../../shared/protocol/frame-limits.js';
import { decodeOutcomeFrame, type DecodedOutcome } from '../../shared/protocol/outcome-frame.js';
import { RENDER_CAPABILITY } from '../../shared/protocol/render-rules.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import type { CrawlerSession } from '../dispatch/dispatcher.js';

export interface SessionHandlers {
  onReady(session: WsSession): void;
  onCredit(session: WsSession): void;
  onOutcome(session: WsSession, outcome: DecodedOutcome): void;
  /** The crawler's request for this task went out. */
  onStarted(session: WsSession, taskId: string): void;
  /** A task's redirect leads back to its host: the crawler asks to send it to `url` (`hop`). */
  onHop?(session: WsSession, taskId: string, url: string | undefined): void;
  /** The answer to a `robots` task (scheduler/robots). */
  onRobots?(session: WsSession, answer: RobotsAnswer): void;
  /** The crawler starts work on these tasks. */
  onWorking?(session: WsSession, taskIds: string[]): void;
  /** The crawler hands these tasks back unfinished (it drains). */
  onRelease?(session: WsSession, taskIds: string[]): void;
  /** The connection ended; `session.saidBye` tells a clean goodbye from a crash or a loss. */
  onClose(session: WsSession): void;
}

export interface SessionOptions {
  heartbeatMs: number;
  /** The fetch rules crawlers get in their welcome (current ones: they can change per crawl). */
  fetch: () => FetchSettings;
  logger: Logger;
  /** Bad frames tolerated before the connection is closed. */
  maxBadFrames?: number;
  /** A socket that has not said hello by then is closed (default 5 s). */
  helloTimeoutMs?: number;
  /** Tasks held at most: sent and not yet answered, plus unused credit (default 1,000). */
  maxCredit?: number;
}

/**
 * One crawler's WebSocket, authenticated at the upgrade (scheduler/ws/upgrade.ts). It must say
 * hello (with the protocol version) within `helloTimeoutMs` and before anything else; credit
 * messages add to what may be sent, up to `maxCredit` tasks held; outcomes arrive as binary frames.
 * A bad frame gets a typed `error` reply and the session lives on, up to a limit.
 */
export class WsSession implements CrawlerSession {
  readonly id = randomUUID();
  credit = 0;
  crawlerId = '';
  canRender = false;
  /** Requests the crawler runs at once (its hello's concurrency; a crawler's default, 32, if absent). */
  slots = 0;
  private ready = false;
  private bye = false;
  private badFrames = 0;
  private lastSeen = Date.now();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly helloTimer: NodeJS.Timeout;
  /** Tasks sent and not answered yet: with the credit, never more than maxCredit. */
  private readonly held = new Set<string>();
  private overCredit = false;
  private readonly logger: Logger;

  constructor(
    private readonly ws: WebSocket,
    private readonly handlers: SessionHandlers,
    private readonly options: SessionOptions,
  ) {
    this.logger = options.logger.child({ sessionId: this.id });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.onClose());
    ws.on('error', (err) => this.logger.warn({ err }, 'crawler socket error'));
    this.heartbeat = setInterval(() => this.checkHeartbeat(), options.heartbeatMs);
    this.helloTimer = setTimeout(() => {
      if (!this.ready) this.fatal(new ProtocolError('HELLO_TIMEOUT', 'no hello in time; closing'));
    }, options.helloTimeoutMs ?? 5_000);
  }

  /**
   * The crawler said `bye` before its connection ended: it stopped cleanly (what it held it
   * finished or released). Otherwise it crashed, was killed or was lost.
   */
  get saidBye(): boolean {
    return this.bye;
  }

  grantHop(taskId: string): void {
    this.send({ type: 'hop-granted', taskId });
  }

  denyHop(taskId: string): void {
    this.send({ type: 'hop-denied', taskId });
  }

  sendTasks(tasks: WireTask[]): void {
    for (const task of tasks) this.held.add(task.taskId);
    this.send({ type: 'tasks', items: tasks });
  }

  send(message: SchedulerMessage): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  /** Ask the crawler to finish what it has and take nothing more (once it has said hello). */
  drain(): void {
    if (this.ready) this.send({ type: 'drain' });
  }

  close(code = 1001, reason = 'scheduler closing'): void {
    this.ws.close(code, reason);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    this.lastSeen = Date.now();
    try {
      // ws hands over one Buffer per message (binaryType nodebuffer): used as it is, never copied.
      const buffer = Buffer.isBuffer(data)
        ? data
        : Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.from(data);
      if (isBinary) {
        if (!this.ready) throw new ProtocolError('NOT_READY', 'outcome before hello');
        const outcome = decodeOutcomeFrame(buffer);
        this.held.delete(outcome.header.taskId);
        this.handlers.onOutcome(this, outcome);
        return;
      }
      if (buffer.length > MAX_TEXT_MESSAGE_BYTES) {
        throw new ProtocolError('BAD_FRAME', `text message over ${MAX_TEXT_MESSAGE_BYTES} bytes`);
      }
      this.onText(buffer.toString('utf8'));
    } catch (err) {
      this.reject(err);
    }
  }

  private onText(text: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new ProtocolError('BAD_FRAME', 'message is not JSON', { cause: err });
    }
    const parsed = crawlerTextMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ProtocolError(
        'BAD_FRAME',
        `invalid message: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`,
      );
    }
    const message = parsed.data;
    if (message.type === 'hello') return this.onHello(message);
    if (!this.ready) throw new ProtocolError('NOT_READY', `${message.type} before hello`);
    switch (message.type) {
      case 'credit':
        this.addCredit(message.n);
        this.handlers.onCredit(this);
        return;
      case 'heartbeat':
        this.send({ type: 'heartbeat', t: message.t });
        return;
      case 'bye':
        this.bye = true;
        this.close(1000, 'bye');
        return;
      case 'started':
        this.handlers.onStarted(this, message.taskId);
        return;
      case 'hop':
        this.handlers.onHop?.(this, message.taskId, message.url);
        return;
      case 'robots':
        this.held.delete(message.taskId);
        this.handlers.onRobots?.(this, message);
        return;
      case 'working':
        this.handlers.onWorking?.(this, message.taskIds);
        return;
      case 'release':
        for (const taskId of message.taskIds) this.held.delete(taskId);
        this.handlers.onRelease?.(this, message.taskIds);
        return;
    }
  }

  /** Credit beyond what the session may hold is dropped (and said once in the log). */
  private addCredit(n: number): void {
    const max = this.options.maxCredit ?? 1_000;
    const room = Math.max(0, max - this.held.size - this.credit);
    if (n > room && !this.overCredit) {
      this.overCredit = true;
      this.logger.warn(
        { asked: n, granted: room, max },
        'crawler asks for more tasks than a session may hold',
      );
    }
    this.credit += Math.min(n, room);
  }

  private onHello(hello: Hello): void {
    if (this.ready) throw new ProtocolError('DUPLICATE_HELLO', 'hello already received');
    if (hello.protocol !== PROTOCOL_VERSION) {
      this.fatal(
        new ProtocolError(
          'PROTOCOL_VERSION',
          `protocol ${hello.protocol} is not supported; this scheduler speaks ${PROTOCOL_VERSION}`,
        ),
      );
      return;
    }
    this.ready = true;
    clearTimeout(this.helloTimer);
    this.crawlerId = hello.crawlerId;
    this.canRender = hello.capabilities?.includes(RENDER_CAPABILITY) ?? false;
    this.slots = hello.concurrency ?? 32;
    this.send({
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      sessionId: this.id,
      heartbeatMs: this.options.heartbeatMs,
      fetch: this.options.fetch(),
    });
    this.logger.info(
      { crawlerId: hello.crawlerId, pid: hello.pid, capabilities: hello.capabilities ?? [] },
      'crawler connected',
    );
    this.handlers.onReady(this);
  }

  private reject(err: unknown): void {
    const error = err instanceof AppError ? err : new ProtocolError('BAD_FRAME', String(err));
    this.badFrames += 1;
    this.logger.warn({ code: error.code, message: error.message }, 'frame rejected');
    if (this.badFrames > (this.options.maxBadFrames ?? 100)) {
      this.fatal(new ProtocolError('TOO_MANY_BAD_FRAMES', 'too many bad frames; closing'));
      return;
    }
    this.send({ type: 'error', code: error.code, message: error.message, fatal: false });
  }

  /** Tells the crawler why and closes; one that does not answer the close is cut off after 1 s. */
  fatal(error: AppError): void {
    this.send({ type: 'error', code: error.code, message: error.message, fatal: true });
    this.ws.close(1008, error.code);
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private checkHeartbeat(): void {
    if (Date.now() - this.lastSeen > this.options.heartbeatMs * 3) {
      this.logger.warn('crawler silent for three heartbeats; dropping it');
      this.ws.terminate();
    }
  }

  private onClose(): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.helloTimer);
    this.handlers.onClose(this);
  }
}
