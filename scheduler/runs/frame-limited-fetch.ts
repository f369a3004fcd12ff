import type { FetchSettings } from '../../shared/protocol/messages.js';
import { FRAME_METADATA_BUDGET_BYTES, outcomeFrameLimit } from '../../shared/protocol/frame-limits.js';

/**
 * The crawler endpoint takes frames up to one limit, fixed when it starts (outcomeFrameLimit of the
 * scheduler's configured crawl). A run that allows larger bodies has its `maxBodyBytes` and
 * `sitemapMaxBytes` cut to what fits that limit, so its crawlers never send a frame the endpoint
 * would refuse: such a body fails as BODY_TOO_LARGE. `onCut` says when that happens.
 */
export function frameLimitedFetch(
  limitBytes: number,
  onCut: (cut: { maxBodyBytes: number }) => void,
): (fetch: FetchSettings) => FetchSettings {
  const most = Math.max(1, Math.floor((limitBytes - FRAME_METADATA_BUDGET_BYTES) / 4) * 3);
  return (fetch) => {
    if (outcomeFrameLimit(fetch) <= limitBytes) return fetch;
    onCut({ maxBodyBytes: most });
    return {
      ...fetch,
      maxBodyBytes: Math.min(fetch.maxBodyBytes, most),
      sitemapMaxBytes: Math.min(fetch.sitemapMaxBytes ?? most, most),
    };
  };
}
