import { z } from 'zod';

/**
 * How the master's commands reach every scheduler at once. SQL stays the source of truth: a
 * command only wakes the schedulers, who then read the run's desired state from the SQL store, so
 * a command that is lost (no scheduler listening, a broker restart) costs nothing but latency.
 * Delivery is at-most-once per subscriber and in no guaranteed order across runs.
 *
 * Adapters: RabbitMQ fanout exchange (shared/adapters/run-control/rabbit-run-control.ts) for a
 * cluster, in-process (local-run-control.ts) for `ackcrawl serve`.
 */
export type RunCommand =
  | { type: 'start'; runId: string; jobId: string; settings: unknown }
  | { type: 'pause' | 'resume' | 'cancel'; runId: string }
  /** A final failure of the run was sent back (marked in SQL): its scheduler queues the URL. */
  | { type: 'retry'; runId: string }
  | { type: 'settings'; runId: string; settings: unknown };

export type RunCommandHandler = (command: RunCommand) => void | Promise<void>;

export interface RunControlSubscription {
  close(): Promise<void>;
}

export interface RunControl {
  /** Sends to every subscriber; resolves once the broker has the command (publisher confirm). */
  publish(command: RunCommand): Promise<void>;
  /** Handler errors are logged, never thrown back at the publisher. */
  subscribe(handler: RunCommandHandler): Promise<RunControlSubscription>;
  /** Closes every subscription and the connection; safe to call twice. */
  close(): Promise<void>;
}

const runId = z.string().min(1).max(200);

/** The wire form of a command, checked on receipt (a peer of another version may send others). */
export const runCommandSchema: z.ZodType<RunCommand> = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), runId, jobId: z.string().min(1).max(200), settings: z.unknown() }),
  z.object({ type: z.enum(['pause', 'resume', 'cancel', 'retry']), runId }),
  z.object({ type: z.literal('settings'), runId, settings: z.unknown() }),
]) as z.ZodType<RunCommand>;
