/**
 * Polls `condition` until it holds or the deadline passes (then throws with `message`; a function
 * is called then, so it can say what the state was at the deadline).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: {
    timeoutMs?: number;
    intervalMs?: number;
    message?: string | (() => string | Promise<string>);
  } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) {
      const message = typeof options.message === 'function' ? await options.message() : options.message;
      throw new Error(`timed out waiting: ${message ?? 'condition'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 25));
  }
}
