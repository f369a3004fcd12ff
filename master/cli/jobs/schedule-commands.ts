import type { Command } from 'commander';
import type { Act } from './act.js';
import { formatTable } from './table.js';

interface Output {
  json?: boolean;
}

/** What the CLI reads of a schedule answer (GET /jobs/{id}/schedule). */
export interface ScheduleAnswer {
  id: string;
  jobId: string;
  expression: string;
  timeZone: string;
  overlap: string;
  misfire: string;
  enabled: boolean;
  waitingFireAt: string | null;
  nextFireTimes: string[];
  lastFire: FireAnswer | null;
}

export interface FireAnswer {
  fireAt: string;
  claimedBy: string;
  outcome: string;
  runId: string | null;
  missed: number;
}

const when = (iso: string | null): string =>
  iso === null ? '-' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

export function scheduleDetails(s: ScheduleAnswer): string {
  const rows: [string, string][] = [
    ['job', s.jobId],
    ['expression', s.expression],
    ['time zone', s.timeZone],
    ['overlap', s.overlap],
    ['misfire', s.misfire],
    ['state', s.enabled ? 'enabled' : 'paused'],
    ['waiting', when(s.waitingFireAt)],
    [
      'last fire',
      s.lastFire === null
        ? '-'
        : `${when(s.lastFire.fireAt)} ${s.lastFire.outcome} ${s.lastFire.runId ?? ''}`.trim(),
    ],
    ['next fires', s.nextFireTimes.length === 0 ? '-' : s.nextFireTimes.map(when).join(', ')],
  ];
  return formatTable(['SCHEDULE', s.id], rows);
}

export function firesTable(fires: readonly FireAnswer[]): string {
  if (fires.length === 0) return 'no fire times yet';
  return formatTable(
    ['FIRE TIME', 'OUTCOME', 'RUN', 'MISSED', 'MASTER'],
    fires.map((f) => [when(f.fireAt), f.outcome, f.runId ?? '-', String(f.missed), f.claimedBy]),
  );
}

/** `ackcrawl jobs schedule …`: the schedule routes (docs/schedules.md). */
export function registerScheduleCommands(jobs: Command, act: Act): void {
  const schedule = jobs
    .command('schedule')
    .description("a job's cron schedule: set, show, pause, resume, remove, fires");
  const path = (jobId: string, rest = ''): string => `/jobs/${encodeURIComponent(jobId)}/schedule${rest}`;

  schedule
    .command('set')
    .description('set the cron schedule of a job (5 fields, or 6 with seconds first)')
    .argument('<job-id>')
    .argument('<expression>', "e.g. '0 3 * * *' or '*/30 * * * * *'")
    .option('--tz <zone>', 'IANA time zone the expression is read in', 'UTC')
    .option('--overlap <policy>', 'skip | queue | allow, while a run of the job is not final', 'skip')
    .option('--misfire <policy>', 'run-once | skip, for fire times missed while no master was up', 'run-once')
    .option('--paused', 'save it paused')
    .option('--json', 'print the answer as JSON')
    .action(
      act(
        async (
          client,
          jobId: string,
          expression: string,
          options: Output & { tz: string; overlap: string; misfire: string; paused?: boolean },
        ) => {
          const s = (await client.call('PUT', path(jobId), {
            expression,
            timeZone: options.tz,
            overlap: options.overlap,
            misfire: options.misfire,
            enabled: options.paused !== true,
          })) as ScheduleAnswer;
          return { json: s, text: scheduleDetails(s) };
        },
      ),
    );

  schedule
    .command('show')
    .description('a job’s schedule with its next fire times')
    .argument('<job-id>')
    .option('--next <n>', 'how many next fire times', '5')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, jobId: string, options: Output & { next: string }) => {
        const s = (await client.call(
          'GET',
          path(jobId, `?next=${encodeURIComponent(options.next)}`),
        )) as ScheduleAnswer;
        return { json: s, text: scheduleDetails(s) };
      }),
    );

  for (const name of ['pause', 'resume'] as const) {
    schedule
      .command(name)
      .description(name === 'pause' ? 'pause a schedule' : 'resume a paused schedule')
      .argument('<job-id>')
      .option('--json', 'print the answer as JSON')
      .action(
        act(async (client, jobId: string, _options: Output) => {
          const s = (await client.call('POST', path(jobId, `/${name}`))) as ScheduleAnswer;
          return { json: s, text: scheduleDetails(s) };
        }),
      );
  }

  schedule
    .command('remove')
    .description('remove a job’s schedule (its runs stay)')
    .argument('<job-id>')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, jobId: string, _options: Output) => {
        await client.call('DELETE', path(jobId));
        return { json: { removed: true, jobId }, text: `removed the schedule of job ${jobId}` };
      }),
    );

  schedule
    .command('fires')
    .description('the fire times claimed and what each became, newest first')
    .argument('<job-id>')
    .option('--limit <n>', 'at most this many', '20')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, jobId: string, options: Output & { limit: string }) => {
        const page = (await client.call(
          'GET',
          path(jobId, `/fires?limit=${encodeURIComponent(options.limit)}`),
        )) as {
          items: FireAnswer[];
        };
        return { json: page, text: firesTable(page.items) };
      }),
    );
}
