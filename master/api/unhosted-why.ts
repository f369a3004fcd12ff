import { parseCrawlSettings, type CrawlSettings } from '../../shared/crawl-settings/index.js';
import type { LogEntry, LogRepository, RunRow } from '../../shared/ports/sql-store.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import { normalizeUrl } from '../../shared/url/normalize.js';
import { crawlScopeOf } from '../../shared/url/crawl-scope.js';
import { createQueryStripper } from '../../shared/url/query-params.js';

/**
 * "Why not yet?" for a run no scheduler hosts: a queued run (none has taken it yet) or an ended
 * one (its scheduler let it go, and with it the run's frontier). Answered from what SQL keeps: the
 * run's settings (its scope) and the failures and retries its scheduler logged for the URL. A page
 * fetched leaves no row in SQL (its record is in the run's output), so an ended run that logged
 * nothing of an in-scope URL says so in `run-ended`, without guessing which it was.
 * Throws InvalidInputError for a URL that is not one, as a scheduler would.
 */
export async function explainUnhostedRun(
  run: RunRow,
  url: string,
  logs: Pick<LogRepository, 'ofUrl'>,
): Promise<WhyAnswer> {
  const settings = readableSettings(run.settings);
  // The spelling the run holds: its stripped parameters gone, as its scheduler would have queued it.
  const spelled = normalizeUrl(url);
  const strip = settings === null ? null : createQueryStripper(settings.stripQueryParams);
  const normalized = strip ? strip(spelled) : spelled;
  const answer = (state: WhyAnswer['state'], reason: string, newest?: LogEntry): WhyAnswer => ({
    url,
    normalized,
    state,
    reason,
    duplicateOf: normalized !== url ? normalized : null,
    task: newest
      ? {
          state: newest.final ? 'failed' : 'retrying',
          attempt: newest.attempts,
          lastError: `${newest.code}: ${newest.lastError}`,
          availableAt: null,
          depth: null,
          parentUrl: null,
        }
      : null,
    host: null,
    crawler: null,
    robots: null,
  });

  const outOfScope = settings === null ? null : scopeProblem(settings, normalized);
  if (outOfScope !== null) return answer('out-of-scope', outOfScope);
  if (run.state === 'queued') {
    return answer(
      'queued',
      'the run is queued: no scheduler has taken it yet, so none of its pages is fetched',
    );
  }

  const ended = `the run ${run.state === 'cancelled' ? 'was cancelled' : run.state}${run.endedAt === null ? '' : ` at ${new Date(run.endedAt).toISOString()}`}`;
  // The newest row says what became of it (its attempt count is how often it was tried).
  const [newest] = await logs.ofUrl(run.id, normalized, 1);
  if (newest?.final) {
    const denied = newest.code === 'ROBOTS_DENIED';
    const gaveUp = denied
      ? 'robots.txt disallowed it'
      : `it failed for good after attempt ${newest.attempts}`;
    return answer(
      denied ? 'robots-denied' : 'failed',
      `${gaveUp}: ${newest.code} (${newest.lastError}); ${ended}`,
      newest,
    );
  }
  const unfinished = run.state === 'succeeded' ? '' : ', or the run ended before it came to it';
  if (newest) {
    return answer(
      'run-ended',
      `${ended}; attempt ${newest.attempts} had failed (${newest.code}) and no final failure was logged: a later attempt fetched it${unfinished}`,
      newest,
    );
  }
  return answer(
    'run-ended',
    `${ended} and logged no failure of this URL: it was fetched (its page record is in the run's output), or no crawled page linked to it${unfinished}`,
  );
}

/** The run's settings snapshot, or null when this build cannot read it (nothing is then claimed of them). */
function readableSettings(settings: unknown): CrawlSettings | null {
  try {
    return parseCrawlSettings(settings);
  } catch {
    return null;
  }
}

/** The scope rule that keeps `normalized` out of the run, in words; null when in scope or unknown. */
function scopeProblem(settings: CrawlSettings, normalized: string): string | null {
  if (settings.seeds.length === 0) return null;
  return crawlScopeOf(settings).problem(normalized);
}
