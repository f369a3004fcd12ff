import { round, type RunnerResult } from './report.js';

/** What asking the scheduler for each redirect hop cost, from a `--redirects` run's two rows. */
export interface RedirectCost {
  /** 301s the site served to the crawl that asked (every page but the home page's). */
  hops: number;
  /** Pages/s of the crawl that asked, over that of the one that did not (--no-robots). */
  speedRatio: number;
  /** Extra CPU of the whole tree per hop asked, in microseconds (negative: within the noise). */
  cpuMicrosPerHop: number;
  text: string;
}

/**
 * Compares the embedded crawl obeying robots.txt, which asks the scheduler before every redirect
 * back to the page's host (`hop`, docs/politeness.md), with the same crawl under --no-robots,
 * which asks nothing for an unpaced host. Null unless both ran and completed.
 */
export function redirectCost(results: readonly RunnerResult[]): RedirectCost | null {
  const asking = results.find((r) => r.runner === 'ackcrawl' && r.status === 'ok');
  const silent = results.find((r) => r.runner === 'ackcrawl --no-robots' && r.status === 'ok');
  if (!asking || !silent || !asking.siteRedirects) return null;
  const hops = asking.siteRedirects;
  const speedRatio = round(asking.pagesPerSecond / silent.pagesPerSecond, 2);
  const cpuMicrosPerHop = Math.round(((asking.cpuSeconds - silent.cpuSeconds) * 1e6) / hops);
  return {
    hops,
    speedRatio,
    cpuMicrosPerHop,
    text:
      `redirects: ${hops} same-host 301s, each asked of the scheduler: ${asking.pagesPerSecond} pages/s and ` +
      `${asking.cpuSeconds} CPU-s, against ${silent.pagesPerSecond} pages/s and ${silent.cpuSeconds} CPU-s ` +
      `asking nothing (--no-robots): ${speedRatio}x the speed, ${cpuMicrosPerHop} µs of CPU per hop`,
  };
}
