import type { Logger } from '../logger.js';

/** Exit status of a process ended by an error nothing handled (sysexits' EX_SOFTWARE). */
export const FAULT_EXIT_CODE = 70;

export type FaultKind = 'uncaughtException' | 'unhandledRejection';

interface FaultState {
  logger: Logger;
  exit: (code: number) => void;
}

let state: FaultState | null = null;

function onFault(kind: FaultKind, err: unknown): void {
  if (!state) return;
  const { logger, exit } = state;
  try {
    logger.fatal({ err, fault: kind }, `${kind}: a bug let an error escape; exiting without a goodbye`);
  } catch {
    process.stderr.write(`${kind}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  exit(FAULT_EXIT_CODE);
}

/**
 * The last line of defence of every role: an exception nothing caught, or a rejection nothing
 * handled, is logged as one structured fatal line (the error with its stack, `fault`, the role's
 * bindings) and the process exits with FAULT_EXIT_CODE at once. It does not shut down cleanly:
 * its state is unknown, and what it held comes back by redelivery (a crawler's tasks count as
 * having been on a crashed crawler, see docs/cluster.md). Every such error is a bug to fix at its
 * cause; this makes sure it is seen and named.
 *
 * Each role's main() calls this with its root logger; calling it again (the CLI first, then the
 * role it runs) only replaces the logger, the handlers are registered once.
 */
export function exitOnFault(
  logger: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  const first = state === null;
  state = { logger, exit };
  if (!first) return;
  process.on('uncaughtException', (err) => onFault('uncaughtException', err));
  process.on('unhandledRejection', (reason) => onFault('unhandledRejection', reason));
}
