/** A pass that runs on a timer (see startPeriodicPass). */
export interface PeriodicPass<T> {
  /** Runs a pass now, or joins the one in flight. */
  runOnce(): Promise<T>;
  /** Stops the timer and waits for the pass in flight (its failure is not thrown again). */
  close(): Promise<void>;
  /** True once close() was called: a long pass reads it to stop early. */
  readonly closed: boolean;
}

/**
 * Runs `pass` every `intervalMs`. Passes never overlap: a tick that finds one in flight is
 * skipped, and runOnce() joins it. A timed pass that fails goes to `onError` and the next tick
 * tries again. The timer does not keep the process alive; close() waits for the pass in flight.
 */
export function startPeriodicPass<T>(
  pass: () => Promise<T>,
  options: { intervalMs: number; onError: (err: unknown) => void },
): PeriodicPass<T> {
  let running: Promise<T> | null = null;
  let closed = false;
  const runOnce = (): Promise<T> => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    if (running === null && !closed) runOnce().catch(options.onError);
  }, options.intervalMs);
  timer.unref();
  return {
    runOnce,
    async close() {
      closed = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
    get closed() {
      return closed;
    },
  };
}
