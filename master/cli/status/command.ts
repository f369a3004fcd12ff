import type { Command } from 'commander';
import { InvalidInputError } from '../../../shared/errors.js';
import { createMasterClient, type MasterClientEnv } from '../jobs/master-client.js';
import type { StatusAnswer } from './answer.js';
import { formatStatus } from './view.js';

interface StatusOptions {
  json?: boolean;
  all?: boolean;
  limit: string;
  scheduler?: string;
  token?: string;
  out?: string;
}

function limitOf(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 500) {
    throw new InvalidInputError(
      'CLI_ARGUMENT_INVALID',
      `--limit is a whole number from 1 to 500, not '${text}'`,
    );
  }
  return n;
}

/**
 * `ackcrawl status`: one look at a crawl. From the master (ACKCRAWL_MASTER_URL) by default: its
 * runs, the fleet in counts, active alerts. From a scheduler with `--scheduler URL` or `--out DIR`
 * (an embedded `ackcrawl crawl`, running or over), which knows its runs only.
 */
export function registerStatusCommand(
  program: Command,
  env: () => MasterClientEnv,
  fail: (err: unknown) => never,
  write: (text: string) => void = (text) => void process.stdout.write(text),
  now: () => number = Date.now,
): void {
  program
    .command('status')
    .description(
      "runs (done, failed, queued, in flight, pages/s, what they wait for), the fleet and active alerts of the master (ACKCRAWL_MASTER_URL; ACKCRAWL_TOKEN, or the admin-token file in ACKCRAWL_DATA_DIR), or a scheduler's runs (--scheduler, --out)",
    )
    .option('--all', 'the newest runs of any state, not only those that are not final')
    .option('--limit <n>', 'at most this many runs (1 to 500)', '50')
    .option(
      '--scheduler <url>',
      "a running scheduler's HTTP address instead of the master, e.g. http://127.0.0.1:8700",
    )
    .option(
      '--token <token>',
      "the scheduler's token (default: ACKCRAWL_TOKEN, else the token file in ACKCRAWL_DATA_DIR, ./ackcrawl-data)",
    )
    .option('--out <dir>', "an embedded crawl's --out folder (running or finished) instead of the master")
    .option('--json', 'print one JSON object: { at, source, runs, totals, fleet, alerts }')
    .action(async (options: StatusOptions) => {
      try {
        const limit = limitOf(options.limit);
        const e = env();
        // Loaded when asked: the scheduler's side reads an embedded crawl's SQLite frontier, which
        // the CLI of a running crawl need not hold.
        const answer: StatusAnswer =
          options.scheduler !== undefined || options.out !== undefined
            ? await (
                await import('./from-scheduler.js')
              ).schedulerStatus(options, { token: e.token, dataDir: e.dataDir }, now)
            : await (
                await import('./from-master.js')
              ).masterStatus(createMasterClient(e), { all: options.all === true, limit }, now);
        write(options.json ? `${JSON.stringify(answer, null, 2)}\n` : `${formatStatus(answer)}\n`);
      } catch (err) {
        fail(err);
      }
    });
}
