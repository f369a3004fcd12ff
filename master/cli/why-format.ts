import type { WhyAnswer } from '../../shared/protocol/why.js';

/** The answer for a person: the state and reason, then what else is known. */
export function formatWhy(a: WhyAnswer): string {
  const lines = [`${a.url}`, `  ${a.state}: ${a.reason}`];
  if (a.duplicateOf) lines.push(`  the crawl keys it as ${a.duplicateOf}`);
  if (a.task) {
    lines.push(
      `  frontier: ${a.task.state}, attempt ${a.task.attempt}${a.task.lastError ? `, last error ${a.task.lastError}` : ''}${a.task.parentUrl ? `, found on ${a.task.parentUrl}` : ''}`,
    );
  }
  if (a.host) {
    const h = a.host;
    lines.push(
      `  host ${h.host}: ${h.inFlight}/${h.concurrency} in flight, delay ${h.delayMs} ms${h.crawlDelayMs ? ` (Crawl-delay ${h.crawlDelayMs} ms)` : ''}${h.nextStartAt ? `, next start ${h.nextStartAt}` : ''}${h.pausedUntil ? `, paused until ${h.pausedUntil} (${h.pauseReason ?? ''})` : ''}`,
    );
  }
  if (a.crawler) lines.push(`  crawler: ${a.crawler.crawlerId} since ${a.crawler.since}`);
  if (a.robots)
    lines.push(
      `  robots.txt: ${a.robots.state}${a.robots.line ? ` (line ${a.robots.line}: ${a.robots.rule ?? ''})` : ''}`,
    );
  return lines.join('\n');
}
