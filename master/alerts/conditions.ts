import type { AlertRuleKind } from '../../shared/ports/alert-store.js';
import type { AlertFacts } from './facts.js';
import type { RuleParams } from './rule-params.js';

/** A subject on which a rule's condition holds now, with what the rule saw. */
export interface Observation {
  subject: string;
  data: Record<string, unknown>;
}

export type Evaluation =
  | {
      available: true;
      holding: Observation[];
      /**
       * Subjects the rule has too little history to judge yet (a master that just started, or a
       * run first seen): an open alert on them is neither resolved nor raised again.
       */
      undecided?: ReadonlySet<string>;
    }
  | { available: false; reason: string };

/**
 * What the engine remembers between passes to see change over time: when each running run's
 * progress last moved, and the dead-letter depth over the last window. It is derived, not state
 * of record: after a master restart it starts again (a stuck run is then reported N minutes
 * later, never sooner).
 */
export class ConditionMemory {
  /** `moved`: the progress was seen to change, so `since` is when it really last moved. */
  readonly progress = new Map<string, { value: number; since: number; moved: boolean }>();
  readonly depths: { at: number; depth: number }[] = [];
  /** When the first depth was sampled: the window is judged only once it is covered. */
  depthsSince: number | null = null;
}

type ConditionKind = Exclude<AlertRuleKind, 'run.succeeded' | 'run.failed' | 'run.cancelled'>;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export async function evaluateCondition<K extends ConditionKind>(
  kind: K,
  params: RuleParams<K>,
  facts: AlertFacts,
  memory: ConditionMemory,
  now: number,
): Promise<Evaluation> {
  switch (kind) {
    case 'agent.lost': {
      const lost = await facts.lostAgents();
      if (!lost.available) return lost;
      return {
        available: true,
        holding: lost.value.map((a) => ({
          subject: a.agentId,
          data: { agentId: a.agentId, host: a.host, lastSeenAt: iso(a.lastSeenAt) },
        })),
      };
    }
    case 'process.crash_loop': {
      const loops = await facts.crashLoops();
      if (!loops.available) return loops;
      return {
        available: true,
        holding: loops.value.map((p) => ({
          subject: `${p.agentId}/${p.processId}`,
          data: { agentId: p.agentId, processId: p.processId, restarts: p.restarts, since: iso(p.since) },
        })),
      };
    }
    case 'errors.rate': {
      const p = params as RuleParams<'errors.rate'>;
      const counts = await facts.failuresSince(now - p.windowMs);
      const byRun = new Map<string, { total: number; codes: Record<string, number> }>();
      for (const c of counts) {
        if (p.finalOnly && !c.final) continue;
        if (p.codes !== undefined && !p.codes.includes(c.code)) continue;
        const entry = byRun.get(c.runId) ?? { total: 0, codes: {} };
        entry.total += c.count;
        entry.codes[c.code] = (entry.codes[c.code] ?? 0) + c.count;
        byRun.set(c.runId, entry);
      }
      const minutes = p.windowMs / 60_000;
      const holding: Observation[] = [];
      for (const [runId, entry] of byRun) {
        const perMinute = entry.total / minutes;
        if (perMinute > p.perMinute) {
          holding.push({
            subject: runId,
            data: {
              runId,
              failures: entry.total,
              perMinute,
              threshold: p.perMinute,
              windowMs: p.windowMs,
              codes: entry.codes,
            },
          });
        }
      }
      return { available: true, holding };
    }
    case 'run.stuck': {
      const p = params as RuleParams<'run.stuck'>;
      const runs = await facts.runningRuns();
      const seen = new Set<string>();
      const undecided = new Set<string>();
      const holding: Observation[] = [];
      for (const run of runs) {
        seen.add(run.id);
        const value = run.counters.done + run.counters.failed;
        const known = memory.progress.get(run.id);
        if (known === undefined || known.value !== value) {
          memory.progress.set(run.id, { value, since: now, moved: known !== undefined });
          if (known === undefined) undecided.add(run.id);
          continue;
        }
        const waiting = run.counters.queued + run.counters.inFlight;
        const stillFor = now - known.since;
        if (!known.moved && stillFor < p.minutes * 60_000) undecided.add(run.id);
        if (waiting > 0 && stillFor >= p.minutes * 60_000) {
          holding.push({
            subject: run.id,
            data: {
              runId: run.id,
              jobId: run.jobId,
              noProgressSince: iso(known.since),
              queued: run.counters.queued,
              inFlight: run.counters.inFlight,
              done: run.counters.done,
              heartbeatAt: iso(run.heartbeatAt),
            },
          });
        }
      }
      for (const id of memory.progress.keys()) if (!seen.has(id)) memory.progress.delete(id);
      return { available: true, holding, undecided };
    }
    case 'dlq.growing': {
      const p = params as RuleParams<'dlq.growing'>;
      const dlq = await facts.deadLetterDepth();
      if (!dlq.available) return dlq;
      memory.depths.push({ at: now, depth: dlq.value.depth });
      memory.depthsSince ??= now;
      while (memory.depths.length > 1 && (memory.depths[0]?.at ?? now) < now - p.windowMs)
        memory.depths.shift();
      const oldest = memory.depths[0]?.depth ?? dlq.value.depth;
      const increase = dlq.value.depth - oldest;
      const covered = now - memory.depthsSince >= p.windowMs;
      return {
        available: true,
        undecided: covered ? new Set() : new Set([dlq.value.queue]),
        holding:
          increase >= p.minIncrease
            ? [
                {
                  subject: dlq.value.queue,
                  data: { queue: dlq.value.queue, depth: dlq.value.depth, increase, windowMs: p.windowMs },
                },
              ]
            : [],
      };
    }
  }
  return { available: false, reason: `unknown rule kind ${String(kind)}` };
}
