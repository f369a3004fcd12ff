import { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import {
  desiredStateSchema,
  type AgentHeartbeat,
  type AgentRegister,
  type DesiredState,
} from '../../shared/protocol/agent.js';
import { postJson } from './master-client.js';

export interface MasterLinkOptions {
  masterUrl: string;
  token: string;
  ca?: string[] | undefined;
  agentId: string;
  heartbeatMs: number;
  registration: () => AgentRegister;
  heartbeat: () => AgentHeartbeat;
  /** The master's answer: what it wants of this agent. */
  onDesired: (desired: DesiredState) => void;
  logger: Logger;
}

/**
 * The agent's side of the fleet: registers with the master, then sends a heartbeat every
 * `heartbeatMs` (or the pace the master asks for) and hands each answer, the desired state, to
 * the process manager. A master that does not answer costs nothing but the view: the processes
 * keep running as last desired, and the agent tries again at the next beat. A master that does
 * not know the agent (404: a new database) gets a registration.
 */
export class MasterLink {
  private registered = false;
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private paceMs: number;
  private readonly base: string;

  constructor(private readonly options: MasterLinkOptions) {
    this.paceMs = options.heartbeatMs;
    this.base = `${options.masterUrl.replace(/\/+$/, '')}/api/v1/agents/${encodeURIComponent(options.agentId)}`;
  }

  start(): void {
    void this.beat();
  }

  /** A heartbeat now (the master nudged us): coalesced with one in progress. */
  sync(): void {
    if (this.busy) this.again = true;
    else void this.beat();
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.beat(), this.paceMs);
  }

  private beat(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.timer) clearTimeout(this.timer);
    this.busy ??= this.exchange()
      .catch((err: unknown) => {
        this.options.logger.warn({ err }, 'master not reached; processes keep running as last desired');
      })
      .finally(() => {
        this.busy = null;
        if (this.again) {
          this.again = false;
          void this.beat();
        } else this.schedule();
      });
    return this.busy;
  }

  private async exchange(): Promise<void> {
    const timeoutMs = Math.max(1_000, this.options.heartbeatMs);
    if (!this.registered) {
      const answer = await postJson(
        `${this.base}/register`,
        this.options.token,
        this.options.registration(),
        {
          ca: this.options.ca,
          timeoutMs,
        },
      );
      this.take(answer.status, answer.body, 'register');
      this.registered = true;
      this.options.logger.info({ masterUrl: this.options.masterUrl }, 'registered with the master');
      return;
    }
    const answer = await postJson(`${this.base}/heartbeat`, this.options.token, this.options.heartbeat(), {
      ca: this.options.ca,
      timeoutMs,
    });
    if (answer.status === 404) {
      this.registered = false;
      this.again = true;
      return;
    }
    this.take(answer.status, answer.body, 'heartbeat');
  }

  private take(status: number, body: unknown, what: string): void {
    if (status !== 200) {
      const code = (body as { error?: { code?: string; message?: string } } | null)?.error;
      throw new AppError(
        'AGENT_REFUSED',
        `the master answered the ${what} with ${status} ${code?.code ?? ''}: ${code?.message ?? ''}`,
      );
    }
    const desired = desiredStateSchema.safeParse(body);
    if (!desired.success)
      throw new AppError('AGENT_REFUSED', `the master's answer to the ${what} is not a desired state`);
    if (desired.data.heartbeatMs > 0) this.paceMs = desired.data.heartbeatMs;
    this.options.onDesired(desired.data);
  }

  /** Sends a last heartbeat (the processes as they ended) and a goodbye; at most `timeoutMs`. */
  async close(timeoutMs = 2_000): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    await this.busy;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.registered) return;
    try {
      await postJson(`${this.base}/heartbeat`, this.options.token, this.options.heartbeat(), {
        ca: this.options.ca,
        timeoutMs,
      });
      await postJson(`${this.base}/goodbye`, this.options.token, undefined, {
        ca: this.options.ca,
        timeoutMs,
      });
    } catch (err) {
      this.options.logger.warn({ err }, 'could not say goodbye to the master; it will show this agent lost');
    }
  }
}
