import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openSqliteFrontier } from '../../../shared/adapters/frontier/sqlite-frontier.js';
import { clientToken } from '../../../shared/config/cluster-token.js';
import { httpStatusCode, toErrorCode } from '../../../shared/error-codes/index.js';
import { AppError, InvalidInputError, errorMessage } from '../../../shared/errors.js';
import type { CrawlStatus } from '../../../shared/protocol/crawl-api.js';
import { DEFAULT_RUN_ID } from '../../../shared/protocol/task.js';
import { runTotals, type StatusAnswer, type StatusRun } from './answer.js';
import { runningScheduler } from '../running-scheduler.js';

export interface SchedulerSource {
  /** `--scheduler`: a running scheduler's HTTP address. */
  scheduler?: string | undefined;
  /** `--token`: its token. */
  token?: string | undefined;
  /** `--out`: an embedded crawl's folder (running or finished). */
  out?: string | undefined;
}

export interface SchedulerEnv {
  /** ACKCRAWL_TOKEN */
  token?: string | undefined;
  /** ACKCRAWL_DATA_DIR: where a scheduler on this machine keeps its token file. */
  dataDir: string;
}

/** What a scheduler's `GET /runs` answers for each run it hosts (scheduler/runs/run-host.ts). */
interface HostedRun {
  runId: string;
  jobId: string;
  state: string;
  counters: StatusRun['counters'];
}

async function get(api: string, path: string, token: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(new URL(path, api), {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new AppError(
      'SCHEDULER_UNREACHABLE',
      `cannot reach the scheduler at ${api} (${errorMessage(err)})`,
      {
        cause: err,
      },
    );
  }
  const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) {
    throw new InvalidInputError(
      toErrorCode(body?.error?.code, httpStatusCode(res.status)),
      `the scheduler at ${api} answered ${res.status}: ${body?.error?.message ?? res.statusText}`,
    );
  }
  return body;
}

/**
 * Without a master (`ackcrawl crawl`, or a scheduler alone) the scheduler is the source: its
 * `GET /runs` gives each hosted run's state and counters, `GET /crawl` whether the crawl is done.
 * It knows no agents and raises no alerts, so `fleet` and `alerts` are null. An embedded crawl is
 * found the way `ackcrawl why` finds it (the scheduler file in `--out`, with its one-time token);
 * one that is over is read from its frontier file.
 */
export async function schedulerStatus(
  source: SchedulerSource,
  env: SchedulerEnv,
  now: () => number,
): Promise<StatusAnswer> {
  const out = source.out === undefined ? undefined : resolve(source.out);
  const running = out ? runningScheduler(out) : null;
  const api = source.scheduler ?? running?.api;
  if (api) {
    const token =
      source.token ??
      (api === running?.api ? running.token : undefined) ??
      clientToken(env.token, env.dataDir);
    try {
      const [hosted, crawl] = await Promise.all([
        get(api, '/runs', token) as Promise<{ runs: HostedRun[] }>,
        get(api, '/crawl', token) as Promise<CrawlStatus>,
      ]);
      const runs: StatusRun[] = hosted.runs.map((r) => ({
        id: r.runId,
        jobId: r.jobId,
        state: r.state,
        waiting: null,
        counters: r.counters,
      }));
      return {
        at: new Date(now()).toISOString(),
        source: { kind: 'scheduler', url: api, crawl: crawl.status, output: crawl.output },
        scope: 'all',
        runs,
        more: false,
        totals: runTotals(runs),
        fleet: null,
        alerts: null,
      };
    } catch (err) {
      // The embedded crawl ended (or was killed) since it wrote the file: its frontier still tells.
      if (!out || source.scheduler) throw err;
    }
  }
  if (!out) {
    throw new InvalidInputError('WHY_NO_SOURCE', 'status needs a master, --scheduler URL or --out DIR');
  }
  return fromFiles(out, now);
}

async function fromFiles(out: string, now: () => number): Promise<StatusAnswer> {
  const path = join(out, 'frontier.sqlite');
  if (!existsSync(path)) {
    throw new InvalidInputError(
      'STATUS_NO_CRAWL',
      `no crawl in ${out} (no scheduler running, no frontier.sqlite): was it the --out of a crawl?`,
    );
  }
  const frontier = openSqliteFrontier({ path, durability: 'normal' });
  try {
    const s = await frontier.stats(DEFAULT_RUN_ID);
    const queued = s.ready + s.delayed + s.leased;
    const runs: StatusRun[] = [
      {
        id: DEFAULT_RUN_ID,
        jobId: DEFAULT_RUN_ID,
        state: queued === 0 ? 'finished' : 'stopped',
        waiting:
          queued === 0
            ? null
            : 'no scheduler runs the crawl: run the same ackcrawl crawl --out again to resume',
        counters: { done: s.done, failed: s.failed, queued, inFlight: 0, pagesPerSecond: 0 },
      },
    ];
    return {
      at: new Date(now()).toISOString(),
      source: { kind: 'files', dir: out },
      scope: 'all',
      runs,
      more: false,
      totals: runTotals(runs),
      fleet: null,
      alerts: null,
    };
  } finally {
    await frontier.close();
  }
}
