import { Option, type Command } from 'commander';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { AppError, InvalidInputError } from '../../../shared/errors.js';
import { masterAction } from './act.js';
import { createMasterClient, type MasterClientEnv } from './master-client.js';
import { registerScheduleCommands } from './schedule-commands.js';
import type { WhyAnswer } from '../../../shared/protocol/why.js';
import { formatWhy } from '../why-format.js';
import { jobDetails, jobsTable, runDetails, type JobAnswer, type RunAnswer } from './views.js';

interface Output {
  json?: boolean;
}

/** `--set key=value`: the value as JSON when it parses (numbers, booleans, arrays), else as text. */
export function parseSetting(pair: string, into: Record<string, unknown>): Record<string, unknown> {
  const at = pair.indexOf('=');
  if (at <= 0) throw new InvalidInputError('CRAWL_OPTIONS_INVALID', `--set takes key=value, not '${pair}'`);
  const key = pair.slice(0, at);
  const text = pair.slice(at + 1);
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // text, as given
  }
  return { ...into, [key]: value };
}

function settingsFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new InvalidInputError(
      'CRAWL_OPTIONS_INVALID',
      `--file ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidInputError('CRAWL_OPTIONS_INVALID', `--file ${path}: a JSON object of settings`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * `ackcrawl jobs …`: the master's job and run routes from the command line, with tables for
 * people and `--json` for scripts (the API's answer as it is).
 */
export function registerJobsCommands(
  program: Command,
  env: () => MasterClientEnv,
  fail: (err: unknown) => never,
  write: (text: string) => void = (text) => void process.stdout.write(text),
): void {
  const jobs = program
    .command('jobs')
    .description(
      "manage the master's jobs and runs (ACKCRAWL_MASTER_URL; ACKCRAWL_TOKEN, or the admin-token file in ACKCRAWL_DATA_DIR)",
    );
  const act = masterAction(env, fail, write);

  registerScheduleCommands(jobs, act);

  jobs
    .command('create')
    .description('save a job: a name, its seeds, and any crawl settings (docs/crawl-settings.md)')
    .argument('<name>', 'unique name of the job')
    .argument('[seed-url...]', 'where the crawl starts')
    .option(
      '--set <key=value>',
      'a setting, e.g. --set maxPages=100 --set allowPrivate=true (repeatable)',
      parseSetting,
      {},
    )
    .option('--file <settings.json>', 'settings from a JSON file (--set and the seeds win)')
    .option('--json', 'print the answer as JSON')
    .action(
      act(
        async (
          client,
          name: string,
          seeds: string[],
          options: Output & { set: Record<string, unknown>; file?: string },
        ) => {
          const body = {
            ...(options.file ? settingsFile(options.file) : {}),
            ...options.set,
            ...(seeds.length > 0 ? { seeds } : {}),
            name,
          };
          const job = (await client.call('POST', '/jobs', body)) as JobAnswer;
          return { json: job, text: `created job ${job.id} (${job.name})` };
        },
      ),
    );

  jobs
    .command('list')
    .description('the jobs, oldest first')
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, options: Output & { limit: string }) => {
        const page = (await client.call('GET', `/jobs?limit=${encodeURIComponent(options.limit)}`)) as {
          items: JobAnswer[];
        };
        return { json: page, text: jobsTable(page.items) };
      }),
    );

  jobs
    .command('show')
    .description('a job with its latest runs, or one run with its counters')
    .argument('<id>', 'a job id or a run id')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, id: string, _options: Output) => {
        const path = encodeURIComponent(id);
        try {
          const job = (await client.call('GET', `/jobs/${path}`)) as JobAnswer;
          const runs = ((await client.call('GET', `/jobs/${path}/runs?limit=10`)) as { items: RunAnswer[] })
            .items;
          return { json: { ...job, runs }, text: jobDetails(job, runs) };
        } catch (err) {
          if (!(err instanceof AppError) || err.details?.code !== 'JOB_NOT_FOUND') throw err;
        }
        const run = (await client.call('GET', `/runs/${path}`)) as RunAnswer;
        return { json: run, text: runDetails(run) };
      }),
    );

  jobs
    .command('run')
    .description('start a run of a job')
    .argument('<job-id>')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, jobId: string, _options: Output) => {
        const run = (await client.call('POST', `/jobs/${encodeURIComponent(jobId)}/runs`)) as RunAnswer;
        return { json: run, text: `started run ${run.id} (${run.state})` };
      }),
    );

  jobs
    .command('why')
    .description(
      'where a URL is in a run and what it waits for; the master asks the scheduler hosting the run, or answers from SQL for a queued or ended run',
    )
    .argument('<run-id>')
    .argument('<url>', 'the URL to explain')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, runId: string, url: string, _options: Output) => {
        const answer = (await client.call(
          'GET',
          `/runs/${encodeURIComponent(runId)}/why?url=${encodeURIComponent(url)}`,
        )) as WhyAnswer;
        return { json: answer, text: formatWhy(answer) };
      }),
    );

  jobs
    .command('delete-run')
    .description("delete an ended run with its failure log and results (an admin token's; the job stays)")
    .argument('<run-id>')
    .option('--json', 'print the answer as JSON')
    .action(
      act(async (client, runId: string, _options: Output) => {
        await client.call('DELETE', `/runs/${encodeURIComponent(runId)}`);
        return { json: { id: runId, deleted: true }, text: `deleted run ${runId}` };
      }),
    );

  jobs
    .command('results')
    .description(
      "a run's cleaned results (what ackcrawl extract made of its pages) as one file: JSON Lines or CSV, to stdout or --out",
    )
    .argument('<run-id>')
    .addOption(
      new Option('--format <format>', 'jsonl: one JSON object a line; csv: a header row, then one row each')
        .choices(['jsonl', 'csv'])
        .default('jsonl'),
    )
    .option('--no-text', "leave out each article's text")
    .option('--out <file>', 'write the file here instead of to stdout')
    .action(async (runId: string, options: { format: string; text: boolean; out?: string }) => {
      try {
        const client = createMasterClient(env());
        const query = `format=${options.format}&text=${String(options.text)}`;
        const body = await client.download(`/runs/${encodeURIComponent(runId)}/results/export?${query}`);
        if (options.out === undefined) {
          await pipeline(body, process.stdout, { end: false });
          return;
        }
        await pipeline(body, createWriteStream(options.out));
        write(`wrote run ${runId}'s results to ${options.out} (${statSync(options.out).size} bytes)\n`);
      } catch (err) {
        fail(err);
      }
    });

  for (const [name, what] of [
    ['pause', 'pause a run (its queued work stays)'],
    ['resume', 'resume a paused run'],
    ['cancel', 'cancel a run (its queued work is dropped)'],
  ] as const) {
    jobs
      .command(name)
      .description(what)
      .argument('<run-id>')
      .option('--json', 'print the answer as JSON')
      .action(
        act(async (client, runId: string, _options: Output) => {
          const run = (await client.call('POST', `/runs/${encodeURIComponent(runId)}/${name}`)) as RunAnswer;
          return { json: run, text: `run ${run.id} is ${run.state}` };
        }),
      );
  }
}
