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
import { decodeOutcomeFrame, type DecodedOutcome } from '../../shared/protocol/outcome-frame.js';
import { RENDER_CAPABILITY } from '../../shared/protocol/render-rules.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import type { CrawlerSession } from '../dispatch/dispatcher.js';

export interface SessionHandlers {
  /** Null to admit the crawler, or the error it is refused with. */
  authenticate(hello: Hello): AppError | null;
  onReady(session: WsSession): void;
  onCredit(session: WsSession): void;
  onOutcome(session: WsSession, outcome: DecodedOutcome): void;
  /** The crawler's request for this task went out. */
  onStarted(session: WsSession, taskId: string): void;
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
}

/**
 * One crawler's WebSocket. It must say hello (with the protocol version and, when required, the
 * token) before anything else; credit messages add to what may be sent; outcomes arrive as binary
 * frames. A bad frame gets a typed `error` reply and the session lives on, up to a limit.
 */
export class WsSession implements CrawlerSession {
  readonly id = randomUUID();
  credit = 0;
  crawlerId = '';
  canRender = false;
  private ready = false;
  private bye = false;
  private badFrames = 0;
  private lastSeen = Date.now();
  private readonly heartbeat: NodeJS.Timeout;
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
  }

  /**
   * The crawler said `bye` before its connection ended: it stopped cleanly (what it held it
   * finished or released). Otherwise it crashed, was killed or was lost.
   */
  get saidBye(): boolean {
    return this.bye;
  }

  sendTasks(tasks: WireTask[]): void {
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
      const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        if (!this.ready) throw new ProtocolError('NOT_READY', 'outcome before hello');
        this.handlers.onOutcome(this, decodeOutcomeFrame(buffer));
        return;
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
        this.credit += message.n;
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
      case 'robots':
        this.handlers.onRobots?.(this, message);
        return;
      case 'working':
        this.handlers.onWorking?.(this, message.taskIds);
        return;
      case 'release':
        this.handlers.onRelease?.(this, message.taskIds);
        return;
    }
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
    const refused = this.handlers.authenticate(hello);
    if (refused) return this.fatal(refused);
    this.ready = true;
    this.crawlerId = hello.crawlerId;
    this.canRender = hello.capabilities?.includes(RENDER_CAPABILITY) ?? false;
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

  private fatal(error: AppError): void {
    this.send({ type: 'error', code: error.code, message: error.message, fatal: true });
    this.ws.close(1008, error.code);
  }

  private checkHeartbeat(): void {
    if (Date.now() - this.lastSeen > this.options.heartbeatMs * 3) {
      this.logger.warn('crawler silent for three heartbeats; dropping it');
      this.ws.terminate();
    }
  }

  private onClose(): void {
    clearInterval(this.heartbeat);
    this.handlers.onClose(this);
  }
}
