import { AppError, StorageError, errorMessage } from '../../../errors.js';

/**
 * The broker is out of reach, or the channel an operation ran on died before the broker confirmed
 * it. Retriable: the frontier reconnects by itself, and the caller repeats the whole call (a
 * settle's leases will then be stale and their messages come back to be handled again).
 */
export function unavailable(op: string, cause?: unknown): StorageError {
  const why = cause === undefined ? 'not connected to RabbitMQ' : errorMessage(cause);
  return new StorageError('FRONTIER_UNAVAILABLE', `rabbitmq frontier ${op} failed: ${why}`, {
    cause,
    details: { op },
  });
}

/** The queues exist with other arguments, or cannot be declared: a person must look. */
export function topologyError(cause: unknown): StorageError {
  return new StorageError(
    'FRONTIER_TOPOLOGY',
    `rabbitmq frontier could not declare its queues: ${errorMessage(cause)}`,
    { cause },
  );
}

export function closedError(): StorageError {
  return new StorageError('FRONTIER_CLOSED', 'rabbitmq frontier is closed');
}

/** AppErrors pass through; anything else from the broker side means "not now". */
export function toRabbitError(err: unknown, op: string): AppError {
  return err instanceof AppError ? err : unavailable(op, err);
}
