import { Counter, Gauge, type Registry } from 'prom-client';
import { PROCESS_STATES } from '../../shared/ports/sql-store.js';
import { MAX_REPORTED_PROCESSES, type ProcessReport } from '../../shared/protocol/agent.js';

/**
 * The agent's series on `registry` (docs/metrics.md), read at each scrape from the reports of
 * its crawler processes (the same ones its heartbeat sends the master): crawler processes do not
 * serve HTTP, so their numbers reach Prometheus here. `slot` is bounded by the slots the agent
 * runs (at most MAX_REPORTED_PROCESSES); a slot no longer reported has no series.
 *
 * The per-slot totals are the crawler's own counters since it started: they go back to 0 when a
 * slot's process restarts, which Prometheus's rate() reads as a counter reset.
 */
export function registerAgentMetrics(registry: Registry, processes: () => readonly ProcessReport[]): void {
  const registers = [registry];
  const reports = (): readonly ProcessReport[] => processes().slice(0, MAX_REPORTED_PROCESSES);
  new Gauge({
    name: 'ackcrawl_crawler_processes',
    help: "This agent's crawler processes by state (starting, running, stopping, stopped, crash-loop, lost)",
    labelNames: ['state'] as const,
    registers,
    collect() {
      const counts = new Map<string, number>(PROCESS_STATES.map((state) => [state, 0]));
      for (const p of reports()) counts.set(p.state, (counts.get(p.state) ?? 0) + 1);
      for (const [state, n] of counts) this.labels(state).set(n);
    },
  });
  type Value = (p: ProcessReport) => number;
  const slotCounter = (name: string, help: string, value: Value): void => {
    new Counter({
      name,
      help,
      labelNames: ['slot'] as const,
      registers,
      collect() {
        // Set from the crawler's own totals: cleared, then added once per scrape.
        this.reset();
        for (const p of reports()) this.labels(String(p.slot)).inc(value(p));
      },
    });
  };
  const slotGauge = (name: string, help: string, value: Value): void => {
    new Gauge({
      name,
      help,
      labelNames: ['slot'] as const,
      registers,
      collect() {
        this.reset();
        for (const p of reports()) this.labels(String(p.slot)).set(value(p));
      },
    });
  };
  slotCounter(
    'ackcrawl_crawler_pages_total',
    'Tasks a crawler process finished since it started, by slot',
    (p) => p.pagesDone,
  );
  slotCounter(
    'ackcrawl_crawler_errors_total',
    'Tasks whose work failed in a crawler process since it started, by slot',
    (p) => p.errors,
  );
  slotCounter(
    'ackcrawl_crawler_cpu_seconds_total',
    'CPU time (user and system) of a crawler process, by slot, seconds',
    (p) => p.cpuSeconds,
  );
  slotCounter(
    'ackcrawl_crawler_restarts_total',
    "Restarts of a slot's crawler process since the agent started",
    (p) => p.restarts,
  );
  slotGauge(
    'ackcrawl_crawler_resident_memory_bytes',
    'Resident memory of a crawler process, by slot, bytes',
    (p) => p.rssBytes,
  );
  slotGauge(
    'ackcrawl_crawler_in_flight_tasks',
    'Tasks a crawler process is working on, by slot',
    (p) => p.inFlight,
  );
}
