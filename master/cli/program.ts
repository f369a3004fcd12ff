// The `ackcrawl` command's program; main.ts (the bin) loads it.
import { Command } from 'commander';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clientToken } from '../../shared/config/cluster-token.js';
import { AppError, ConfigError } from '../../shared/errors.js';
import type { WhyOptions } from './why.js';
import { roleScripts, type RoleName } from '../embedded/role-scripts.js';
import { planCrawl, type RawCrawlOptions } from './crawl-options.js';
import { addSettingOptions } from './crawl-flags.js';
import { exitOnFault } from '../../shared/lifecycle/faults.js';
import { registerJobsCommands } from './jobs/commands.js';
import { registerFleetCommands } from './fleet/commands.js';
import { registerStatusCommand } from './status/command.js';
import { registerExtractCommands } from './extract-commands.js';
import { createLogger } from '../../shared/logger.js';
import { letYoungGenerationGrow } from '../../shared/processes/young-generation.js';
import { CRAWLER_HEAP, SCHEDULER_HEAP, type RoleHeap } from '../../shared/processes/node-flags.js';
import { applyRoleHeap } from '../../shared/processes/running-heap.js';

// A role run from here (`ackcrawl scheduler`, ...) installs its own logger in place of this one.
exitOnFault(createLogger({ name: 'cli', level: 'error' }));

/** Where a scheduler on this machine keeps its data, and its token when none is given. */
const DEFAULT_DATA_DIR = './ackcrawl-data';

function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`ackcrawl: ${message.split('\n').join('\nackcrawl: ')}\n`);
  process.exit((err instanceof AppError && err.status === 400) || err instanceof ConfigError ? 2 : 1);
}

// Each command loads what it runs when it runs: a crawl's CLI process stays beside its crawlers for
// the whole crawl, and modules only other commands use (the master, `why`'s frontier reader, the
// URL suffix list) would cost it about 12 MB of memory.
async function crawl(seeds: string[], raw: RawCrawlOptions & { cluster?: boolean }): Promise<void> {
  const plan = planCrawl(seeds, raw, { needsOutDir: raw.cluster !== true, env: process.env });
  const { ProgressDisplay } = await import('./progress-display.js');
  const { buildClusterSummary, buildStoppedSummary, buildSummary, formatStoppedSummary, formatSummary } =
    await import('./summary.js');
  const display = new ProgressDisplay();
  const onProgress = (p: Record<string, number>): void => display.update(p as never);
  if (raw.cluster) {
    const target = {
      // A crawler's list of schedulers (spaces or commas): the crawl goes to the first.
      schedulerUrl:
        process.env.ACKCRAWL_SCHEDULER_URL?.split(/[\s,]+/).find(Boolean) ?? 'ws://127.0.0.1:8700/crawlers',
      token: clientToken(process.env.ACKCRAWL_TOKEN, process.env.ACKCRAWL_DATA_DIR || DEFAULT_DATA_DIR),
    };
    const { runClusterCrawl } = await import('../cluster/run-cluster-crawl.js');
    const { summary, output } = await runClusterCrawl(plan, target, { onProgress });
    display.clear();
    const result = buildClusterSummary(summary, output);
    process.stdout.write(plan.json ? `${JSON.stringify(result)}\n` : `${formatSummary(result)}\n`);
    return;
  }
  const { runEmbeddedCrawl } = await import('../embedded/run-embedded-crawl.js');
  const { summary, stopped } = await runEmbeddedCrawl(plan, { onProgress });
  display.clear();
  if (stopped) {
    const output = buildStoppedSummary(stopped.stats, stopped.timeLimitMs, plan.outDir);
    process.stdout.write(plan.json ? `${JSON.stringify(output)}\n` : `${formatStoppedSummary(output)}\n`);
    return;
  }
  const output = buildSummary(summary, plan.outDir);
  process.stdout.write(plan.json ? `${JSON.stringify(output)}\n` : `${formatSummary(output)}\n`);
}

interface RoleOptions {
  config?: string;
  processes?: string;
  renderProcesses?: string;
  render?: boolean;
}

/** The roles ackcrawl starts with heap flags of their own keep those settings when the user starts them. */
const ROLE_HEAPS: Partial<Record<RoleName, RoleHeap>> = { scheduler: SCHEDULER_HEAP, crawler: CRAWLER_HEAP };

async function runRole(role: RoleName, options: RoleOptions): Promise<void> {
  const heap = ROLE_HEAPS[role];
  if (heap) applyRoleHeap(heap);
  // Settings travel as the role reads them: the environment, and a config file it validates.
  if (options.config) process.env.ACKCRAWL_CONFIG = resolve(options.config);
  if (options.processes) process.env.ACKCRAWL_PROCESSES = options.processes;
  if (options.renderProcesses) process.env.ACKCRAWL_RENDER_PROCESSES = options.renderProcesses;
  if (options.render) process.env.ACKCRAWL_CAN_RENDER = 'true';
  const module = (await import(pathToFileURL(roleScripts[role]).href)) as { main: () => Promise<void> };
  await module.main();
}

/**
 * Commands that start other processes and then mostly wait on them (the crawl and serve CLIs):
 * their young generation stays small. The others let it grow before they run (an agent gives its
 * start-up heap back itself, wherever it runs: client/agent/main.ts).
 */
const SUPERVISORS = new Set(['crawl', 'serve']);

const program = new Command()
  .name('ackcrawl')
  .description('A web crawler with acknowledged delivery: no accepted URL is ever lost.')
  .version('0.1.0')
  .hook('preAction', (_program, action) => {
    if (!SUPERVISORS.has(action.name())) letYoungGenerationGrow();
  });

const crawlCommand = program
  .command('crawl')
  .description('crawl from seed URLs on this machine (embedded: SQLite frontier, files for records)')
  .argument('<seed-url...>', 'where to start (http or https)')
  .option(
    '--out <dir>',
    'folder for page records and crawl state; the same folder resumes a crawl',
    './crawl-output',
  )
  .option('--processes <n>', 'crawler processes', '2')
  .option('--concurrency <n>', 'requests in flight per crawler process', '32')
  .option('--render-processes <n>', 'render-capable crawler processes when anything is rendered', '1')
  .option('--gzip', 'compress record files (pages-N.jsonl.gz)')
  .option('--json', 'print the summary as JSON')
  .option('--verbose', 'show the roles\u2019 logs')
  .option(
    '--cluster',
    'submit to the running cluster (ACKCRAWL_SCHEDULER_URL; ACKCRAWL_TOKEN, or the token file in ACKCRAWL_DATA_DIR) and follow it, instead of running the roles here',
  )
  .action((seeds: string[], options: RawCrawlOptions) => crawl(seeds, options).catch(fail));
// The crawl's settings, each from shared/crawl-settings (docs/crawl-settings.md).
addSettingOptions(crawlCommand);

for (const role of ['master', 'scheduler', 'agent', 'crawler'] as const) {
  const command = program
    .command(role)
    .description(
      `run the ${role} role (ACKCRAWL_* environment variables and/or --config; see docs/configuration.md)`,
    )
    .option(
      '--config <file>',
      'a JSON file of settings (keys as in docs/configuration.md); the environment wins',
    );
  if (role === 'agent') {
    command.option('--processes <n>', 'crawler processes to keep running');
    command.option('--render-processes <n>', 'render-capable crawler processes to keep running besides');
  }
  if (role === 'crawler') {
    command.option('--render', 'take tasks that need rendering too (drives /usr/bin/chromium)');
  }
  command.action((options: RoleOptions) => runRole(role, options).catch(fail));
}

program
  .command('archive')
  .description(
    'run the archiver: copy the page topic into gzip JSON-lines archives in S3 by job and date (see docs/cluster.md)',
  )
  .option(
    '--config <file>',
    'a JSON file of settings (keys as in docs/configuration.md); the environment wins',
  )
  .action((options: { config?: string }) => runRole('archiver', options).catch(fail));

program
  .command('serve')
  .description(
    'run master, scheduler and an agent with crawler processes on this machine (SQLite store and frontier, record files); prints the master\u2019s URL, and the admin token when it is made; the same command resumes after a kill',
  )
  .option('--data-dir <dir>', 'where every role keeps its state (ACKCRAWL_DATA_DIR, default ./ackcrawl-data)')
  .option('--processes <n>', 'crawler processes (ACKCRAWL_PROCESSES, default 2)')
  .option('--verbose', 'the roles\u2019 logs at info level on stderr (warnings only without)')
  .action((options: { dataDir?: string; processes?: string; verbose?: boolean }) =>
    import('./serve/serve.js')
      .then(({ serve }) =>
        serve({
          dataDir: options.dataDir ?? (process.env.ACKCRAWL_DATA_DIR || DEFAULT_DATA_DIR),
          ...(options.processes ? { processes: options.processes } : {}),
          verbose: options.verbose === true,
        }),
      )
      .catch(fail),
  );

program
  .command('why')
  .description('say where a URL is in a crawl and what it waits for (scope, robots, politeness, retries…)')
  .argument('<url>', 'the URL to explain')
  .option('--scheduler <url>', "a running scheduler's HTTP address, e.g. http://127.0.0.1:8080")
  .option(
    '--token <token>',
    "the scheduler's token (default: ACKCRAWL_TOKEN, else the token file in ACKCRAWL_DATA_DIR, ./ackcrawl-data)",
  )
  .option('--out <dir>', "an embedded crawl's --out folder (running or finished)")
  .option('--json', 'print the answer as JSON')
  .action(async (url: string, options: WhyOptions) => {
    const { why } = await import('./why.js');
    const { formatWhy } = await import('./why-format.js');
    const answer = await why(url, options, {
      token: process.env.ACKCRAWL_TOKEN,
      dataDir: process.env.ACKCRAWL_DATA_DIR || DEFAULT_DATA_DIR,
      schedulerApi: process.env.ACKCRAWL_SCHEDULER_API,
    }).catch(fail);
    process.stdout.write(options.json ? `${JSON.stringify(answer, null, 2)}\n` : `${formatWhy(answer)}\n`);
  });

const masterEnv = () => ({
  masterUrl: process.env.ACKCRAWL_MASTER_URL,
  token: process.env.ACKCRAWL_TOKEN,
  dataDir: process.env.ACKCRAWL_DATA_DIR || DEFAULT_DATA_DIR,
});
registerJobsCommands(program, masterEnv, fail);
registerFleetCommands(program, masterEnv, fail);
registerStatusCommand(program, masterEnv, fail);

registerExtractCommands(program, fail);

program.parseAsync(process.argv).catch(fail);
