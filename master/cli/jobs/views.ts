import { formatTable } from './table.js';

/** What the CLI reads of the API's answers (docs/master-api.md has the whole of them). */
export interface JobAnswer {
  id: string;
  name: string;
  settings: { seeds: string[]; maxPages: number; [key: string]: unknown };
  createdAt: string;
  updatedAt: string;
}

export interface RunAnswer {
  id: string;
  jobId: string;
  state: string;
  waiting: string | null;
  counters: {
    done: number;
    failed: number;
    queued: number;
    inFlight: number;
    pagesPerSecond: number;
    /** Absent from masters before recrawls. */
    notModified?: number;
  };
  schedulerId: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** When its time limit ends it (absent from masters before time limits). */
  endsBy?: string | null;
  error: string | null;
}

const when = (iso: string | null): string =>
  iso === null ? '-' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

export function jobsTable(jobs: readonly JobAnswer[]): string {
  if (jobs.length === 0) return 'no jobs';
  return formatTable(
    ['ID', 'NAME', 'SEEDS', 'MAX PAGES', 'UPDATED'],
    jobs.map((j) => [
      j.id,
      j.name,
      j.settings.seeds.length === 1 ? (j.settings.seeds[0] ?? '') : `${j.settings.seeds.length} seeds`,
      j.settings.maxPages === 0 ? 'no limit' : String(j.settings.maxPages),
      when(j.updatedAt),
    ]),
  );
}

export function runsTable(runs: readonly RunAnswer[]): string {
  if (runs.length === 0) return 'no runs';
  return formatTable(
    ['RUN', 'STATE', 'DONE', 'FAILED', 'QUEUED', 'IN FLIGHT', 'PAGES/S', 'CREATED'],
    runs.map((r) => [
      r.id,
      r.state,
      String(r.counters.done),
      String(r.counters.failed),
      String(r.counters.queued),
      String(r.counters.inFlight),
      r.counters.pagesPerSecond.toFixed(1),
      when(r.createdAt),
    ]),
  );
}

export function jobDetails(job: JobAnswer, runs: readonly RunAnswer[]): string {
  const settings = Object.entries(job.settings)
    .map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`)
    .join('\n');
  return `job ${job.id}\nname: ${job.name}\ncreated: ${when(job.createdAt)}\nupdated: ${when(job.updatedAt)}\nsettings:\n${settings}\n\nruns (newest first):\n${runsTable(runs)}`;
}

export function runDetails(run: RunAnswer): string {
  const c = run.counters;
  return [
    `run ${run.id} (job ${run.jobId})`,
    `state: ${run.state}${run.waiting ? ` (${run.waiting})` : ''}`,
    `done ${c.done}${c.notModified ? ` (${c.notModified} not modified)` : ''}, failed ${c.failed}, queued ${c.queued}, in flight ${c.inFlight}, ${c.pagesPerSecond.toFixed(1)} pages/s`,
    `scheduler: ${run.schedulerId ?? '-'}`,
    `created ${when(run.createdAt)}, started ${when(run.startedAt)}, ended ${when(run.endedAt)}`,
    ...(run.endsBy ? [`time limit: cancelled at ${when(run.endsBy)} if not done`] : []),
    ...(run.error ? [`error: ${run.error}`] : []),
  ].join('\n');
}
