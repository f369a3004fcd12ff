import { StorageError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type {
  RunCommand,
  RunCommandHandler,
  RunControl,
  RunControlSubscription,
} from '../../ports/run-control.js';

/**
 * Run control inside one process (`ackcrawl serve`: master and scheduler together). Every handler
 * gets each command on a later turn of the event loop, as a broker would deliver it, so a
 * publisher never runs a handler's code on its own stack.
 */
export function createLocalRunControl(logger: Logger): RunControl {
  const handlers = new Set<RunCommandHandler>();
  let closed = false;
  const closedError = (): StorageError => new StorageError('RUN_CONTROL_CLOSED', 'run control is closed');
  const deliver = (handler: RunCommandHandler, command: RunCommand): void => {
    setImmediate(() => {
      if (!handlers.has(handler)) return;
      Promise.resolve()
        .then(() => handler(command))
        .catch((err: unknown) =>
          logger.error({ err, command: command.type, runId: command.runId }, 'run command handler failed'),
        );
    });
  };
  return {
    async publish(command) {
      if (closed) throw closedError();
      // A copy, as a broker would hand over: a handler cannot change what others receive.
      for (const handler of handlers) deliver(handler, structuredClone(command));
    },
    async subscribe(handler): Promise<RunControlSubscription> {
      if (closed) throw closedError();
      handlers.add(handler);
      return {
        async close() {
          handlers.delete(handler);
        },
      };
    },
    async close() {
      closed = true;
      handlers.clear();
    },
  };
}
