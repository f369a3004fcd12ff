import type { Logger } from '../logger.js';

/**
 * SIGTERM and SIGINT run `shutdown` once, with a deadline after which the process exits anyway;
 * a second signal exits at once.
 */
export function onShutdownSignal(
  logger: Logger,
  shutdown: (signal: string) => Promise<void>,
  deadlineMs = 10_000,
): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal; exiting now');
      process.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline passed; exiting');
      process.exit(1);
    }, deadlineMs).unref();
    shutdown(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handle);
  process.once('SIGINT', handle);
}

/** True when this module file is the script node was started with (not imported). */
export function isEntryPoint(metaUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  return metaUrl === new URL(`file://${script.startsWith('/') ? '' : process.cwd() + '/'}${script}`).href;
}
