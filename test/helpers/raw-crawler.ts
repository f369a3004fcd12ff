import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';
import type { OutcomeHeader, SchedulerMessage, WireTask } from '../../shared/protocol/messages.js';
import { DEFAULT_JOB_ID, PAGE_RECORD_SCHEMA, type PageRecord } from '../../shared/protocol/page-record.js';
import { DEFAULT_RUN_ID } from '../../shared/protocol/task.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import { waitFor } from './wait-for.js';

const WAIT = { timeoutMs: 5_000 };

export type ErrorMessage = Extract<SchedulerMessage, { type: 'error' }>;

export interface ConnectOptions {
  /** Sent as `Authorization: Bearer <token>` on the upgrade; absent: no Authorization header. */
  token?: string;
  headers?: Record<string, string>;
  /** The local address to connect from (127.0.0.2 is another loopback address on Linux). */
  localAddress?: string;
}

function wsOptions(options: ConnectOptions): ConstructorParameters<typeof WebSocket>[2] {
  return {
    headers: {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  };
}

/** What the scheduler answered an upgrade it refused: the status, headers and JSON body. */
export interface Refusal {
  status: number;
  headers: IncomingHttpHeaders;
  body: { error?: { code?: string; message?: string } };
}

/**
 * Tries to open a crawler socket; resolves with the HTTP answer when the scheduler refuses it, or
 * 'open' (then closes it) when it opens, or 'error' when the connection failed without an answer.
 */
export async function tryUpgrade(
  url: string,
  options: ConnectOptions = {},
): Promise<Refusal | 'open' | 'error'> {
  const ws = new WebSocket(url, wsOptions(options));
  return new Promise((resolve) => {
    ws.once('open', () => {
      ws.terminate();
      resolve('open');
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        ws.terminate();
        let body: Refusal['body'] = {};
        try {
          body = JSON.parse(text) as Refusal['body'];
        } catch {
          // not JSON: left empty, the test says so
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    ws.on('error', () => resolve('error'));
  });
}

/** A crawler written by hand: raw frames in, every scheduler message recorded. */
export class RawClient {
  readonly messages: SchedulerMessage[] = [];
  /** Bytes of every text frame received, as they came (to look for secrets in). */
  received = '';
  closed: { code: number; reason: string } | null = null;
  private beat = 0;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      assert.equal(isBinary, false, 'the scheduler sends text frames only');
      this.received += String(data);
      this.messages.push(JSON.parse(String(data)) as SchedulerMessage);
    });
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    ws.on('error', () => {});
  }

  static async connect(url: string, options: ConnectOptions = {}): Promise<RawClient> {
    const ws = new WebSocket(url, wsOptions(options));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new RawClient(ws);
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  text(data: string): void {
    this.ws.send(data);
  }

  json(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  binary(frame: Buffer, done?: (err?: Error) => void): void {
    this.ws.send(frame, { binary: true }, done);
  }

  async hello(fields: Record<string, unknown> = {}): Promise<void> {
    this.json({ type: 'hello', protocol: PROTOCOL_VERSION, crawlerId: 'raw-test', ...fields });
    await waitFor(() => this.messages.some((m) => m.type === 'welcome'), { ...WAIT, message: 'welcome' });
  }

  credit(n: number): void {
    this.json({ type: 'credit', n });
  }

  tasks(): WireTask[] {
    return this.messages.flatMap((m) => (m.type === 'tasks' ? m.items : []));
  }

  errors(): ErrorMessage[] {
    return this.messages.filter((m): m is ErrorMessage => m.type === 'error');
  }

  /** Waits for the `count`-th error and returns it. */
  async error(count: number, timeoutMs = WAIT.timeoutMs): Promise<ErrorMessage> {
    await waitFor(() => this.errors().length >= count, { timeoutMs, message: `error #${count}` });
    return this.errors()[count - 1] as ErrorMessage;
  }

  /**
   * A heartbeat round trip. The scheduler handles a socket's frames in order and replies in order,
   * so once the echo is here, every reply to what was sent before it is here too.
   */
  async barrier(): Promise<void> {
    const t = (this.beat += 1);
    this.json({ type: 'heartbeat', t });
    await waitFor(() => this.messages.some((m) => m.type === 'heartbeat' && m.t === t), {
      ...WAIT,
      message: 'heartbeat echo',
    });
  }

  async waitClosed(timeoutMs = WAIT.timeoutMs): Promise<{ code: number; reason: string }> {
    await waitFor(() => this.closed !== null, { timeoutMs, message: 'socket closed' });
    return this.closed as { code: number; reason: string };
  }

  terminate(): void {
    this.ws.terminate();
  }

  /** The connection dies as it does when the crawler process is killed: no close frame, no bye. */
  async kill(): Promise<void> {
    this.ws.terminate();
    await this.waitClosed();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.ws.close(1000, 'test done');
    await this.waitClosed();
  }
}

export function pageRecord(task: WireTask, fields: Partial<PageRecord> = {}): Buffer {
  const record: PageRecord = {
    schema: PAGE_RECORD_SCHEMA,
    jobId: task.jobId ?? DEFAULT_JOB_ID,
    runId: task.runId ?? DEFAULT_RUN_ID,
    captureId: task.captureId ?? randomUUID(),
    url: task.url,
    finalUrl: task.url,
    status: 200,
    outcome: 'ok',
    error: null,
    contentType: 'text/html',
    depth: task.depth,
    parentUrl: task.parentUrl,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: [],
    headers: {},
    fetchedAt: new Date().toISOString(),
    durationMs: 1,
    attempt: task.attempt,
    crawlerId: 'raw-test',
    bodyBytes: 9,
    bodySha256: null,
    bodyEncoding: 'utf8',
    body: '<p>hi</p>',
    ...fields,
  };
  return Buffer.from(JSON.stringify(record));
}

export function okOutcome(taskId: string, links: string[] = []): OutcomeHeader {
  return { type: 'outcome', taskId, outcome: 'ok', failure: null, links };
}
