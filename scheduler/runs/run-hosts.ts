import type { RunHostState } from '../../shared/protocol/run-hosts.js';
import { hostPolitenessView, type HostPoliteness } from '../../shared/protocol/why.js';
import type { RecentHosts } from './recent-hosts.js';

/** What the dispatcher holds of one run, by host: its tasks in flight and those buffered. */
export type HeldByHost = ReadonlyMap<string, { inFlight: number; queued: number }>;

export interface RunHostsInput {
  held: HeldByHost;
  recent: RecentHosts;
  gate: { explain(host: string, now: number): HostPoliteness };
  now: number;
  limit: number;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * A run's busiest hosts: those with its tasks in flight first, then those with its tasks buffered,
 * then the recently active ones, cooling-down hosts last among equals. Only hosts the scheduler
 * already tracks are looked at (tasks it holds, the run's bounded recent list), so the answer
 * costs no more for a run over many hosts.
 */
export function runHosts({ held, recent, gate, now, limit }: RunHostsInput): RunHostState[] {
  const hosts = new Set([...held.keys(), ...recent.entries().map(([host]) => host)]);
  const rows = [...hosts].map((host) => {
    const mine = held.get(host);
    const seen = recent.get(host);
    return {
      runInFlight: mine?.inFlight ?? 0,
      state: {
        ...hostPolitenessView(gate.explain(host, now), now),
        queued: mine?.queued ?? 0,
        fetched: seen?.fetched ?? 0,
        lastActiveAt: iso(seen?.lastActiveAt ?? null),
      } satisfies RunHostState,
      lastActiveAt: seen?.lastActiveAt ?? 0,
    };
  });
  rows.sort(
    (a, b) =>
      b.runInFlight - a.runInFlight ||
      b.state.queued - a.state.queued ||
      b.lastActiveAt - a.lastActiveAt ||
      Number(b.state.pausedUntil !== null) - Number(a.state.pausedUntil !== null) ||
      a.state.host.localeCompare(b.state.host),
  );
  return rows.slice(0, limit).map((row) => row.state);
}
