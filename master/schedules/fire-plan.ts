import type { MisfirePolicy, OverlapPolicy } from '../../shared/ports/sql-store.js';

/** One fire time to claim: `run` goes on to the overlap policy; `missed` is claimed and recorded only. */
export interface PlannedFire {
  fireAt: number;
  kind: 'run' | 'missed';
  /** Older missed fire times folded into this one. */
  folded: number;
  /** This one was missed too (older than the grace): a misfire, with `folded` more. */
  late: boolean;
}

/**
 * What the due fire times of a schedule (those after its last claimed one, up to now) come to.
 * A fire time more than `graceMs` old was missed (no master was up to fire it): under `run-once`
 * all the missed ones make one run, at the newest of them; under `skip` none does, and the newest
 * is still claimed so that the next start does not count them again. The rest fire as usual.
 */
export function planFires(input: {
  due: readonly number[];
  now: number;
  graceMs: number;
  misfire: MisfirePolicy;
}): PlannedFire[] {
  const missed = input.due.filter((t) => input.now - t > input.graceMs);
  const onTime = input.due.filter((t) => input.now - t <= input.graceMs);
  const plan: PlannedFire[] = [];
  const newestMissed = missed.at(-1);
  if (newestMissed !== undefined) {
    plan.push({
      fireAt: newestMissed,
      kind: input.misfire === 'run-once' ? 'run' : 'missed',
      folded: missed.length - 1,
      late: true,
    });
  }
  for (const fireAt of onTime) plan.push({ fireAt, kind: 'run', folded: 0, late: false });
  return plan;
}

export type OverlapDecision = 'start' | 'wait' | 'skip';

/**
 * What a fire time does given the job's runs that are not final: `allow` always starts one;
 * `skip` starts one only when none is active; `queue` starts one when none is active, else waits
 * behind it — at most one waiting, so a fire time finding one waiting already is skipped.
 */
export function decideOverlap(
  policy: OverlapPolicy,
  activeRuns: number,
  oneWaiting: boolean,
): OverlapDecision {
  if (activeRuns === 0 || policy === 'allow') return 'start';
  if (policy === 'queue' && !oneWaiting) return 'wait';
  return 'skip';
}
