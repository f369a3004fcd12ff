import type { SinkRecord } from '../../shared/ports/page-sink.js';

export interface RecoveredOutcome {
  /** `not-modified`: its links are those of the capture it confirmed (the recrawl index's). */
  outcome: 'ok' | 'failed' | 'not-modified';
  follow: string[];
  error: string;
}

/**
 * Records the sink made durable after the last settled batch: their tasks were fetched, but the
 * crash came before the frontier heard of it. They are settled from the record when leased again,
 * instead of being fetched and written a second time. A record whose link lists are not in it (moved
 * to the blob store and not read back) is left out: settled without them, its links would be lost.
 */
export function readRecovered(records: readonly SinkRecord[]): Map<string, RecoveredOutcome> {
  const byUrl = new Map<string, RecoveredOutcome>();
  for (const record of records) {
    try {
      const page = JSON.parse(record.value.toString('utf8')) as {
        outcome?: unknown;
        links?: unknown;
        nofollow?: unknown;
        nofollowLinks?: unknown;
        linksRef?: unknown;
        error?: { code?: unknown; message?: unknown } | null;
      };
      if (page.linksRef !== undefined || page.links === null) continue;
      const links = Array.isArray(page.links)
        ? page.links.filter((l): l is string => typeof l === 'string')
        : [];
      const skip = new Set(Array.isArray(page.nofollowLinks) ? page.nofollowLinks : []);
      byUrl.set(record.key, {
        outcome: page.outcome === 'ok' || page.outcome === 'not-modified' ? page.outcome : 'failed',
        follow: page.nofollow === true ? [] : links.filter((l) => !skip.has(l)),
        error: page.error ? `${String(page.error.code)}: ${String(page.error.message)}` : '',
      });
    } catch {
      // Unreadable: the task is fetched again.
    }
  }
  return byUrl;
}
