/**
 * The next delay of an adaptive host, AutoThrottle style: it moves halfway toward `factor` × the
 * response time just measured, never below the host's configured delay nor above `maxMs`. A failed
 * or error response never lowers it (a slow error is no sign the server got faster).
 */
export function nextAdaptiveDelay(
  previousMs: number,
  sample: { responseMs: number; ok: boolean },
  options: { minMs: number; maxMs: number; factor: number },
): number {
  const target = Math.max(0, sample.responseMs) * options.factor;
  let next = (previousMs + target) / 2;
  if (!sample.ok) next = Math.max(previousMs, next);
  return Math.round(Math.min(options.maxMs, Math.max(options.minMs, next)));
}
