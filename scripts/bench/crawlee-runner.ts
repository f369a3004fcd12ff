/**
 * The Crawlee reference: a CheerioCrawler tuned for raw speed, keeping nothing durable (in-memory
 * request queue, no dataset, no key-value store on disk). Its request handler only enqueues
 * same-hostname links, like ackcrawl's link extraction; unlike ackcrawl it stores no page bodies.
 *
 *   node dist/scripts/bench/crawlee-runner.js --url http://127.0.0.1:PORT/ [--url …] [--concurrency 200]
 *     [--max-pages N] [--same-domain-delay-ms MS]
 *
 * With several seeds (the many-hosts bench), links are followed to any seed's origin. Crawlee's
 * only per-host politeness is `sameDomainDelaySecs` (from `--same-domain-delay-ms`): at least that
 * long between two request starts to one registrable domain (tldts getDomain), which it enforces
 * by putting an early request back in the queue. It has no per-host concurrency limit
 * (maxConcurrency counts all hosts together), and getDomain is null for an IP address, for which
 * Crawlee then skips the delay altogether.
 *
 * Tuning (all on the crawler's side, none on the site's): minConcurrency = maxConcurrency so the
 * autoscaled pool starts at full speed instead of ramping up from 1, no retries, no session pool
 * (the site sets no cookies), log level WARNING so per-minute statistics do not touch stdout.
 */
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';
import { MemoryStorage } from '@crawlee/memory-storage';
import { parseRunnerArgs, summarise } from './runner-args.js';

const args = parseRunnerArgs(200, ['same-domain-delay-ms']);
const origins = new Set(args.urls.map((url) => new URL(url).origin));
const sameDomainDelayMs = Number(args.extra['same-domain-delay-ms'] ?? 0);
log.setLevel(log.LEVELS.WARNING);

const config = new Configuration({
  persistStorage: false,
  storageClient: new MemoryStorage({ persistStorage: false, writeMetadata: false }),
});

let failed = 0;
const crawler = new CheerioCrawler(
  {
    minConcurrency: args.concurrency,
    maxConcurrency: args.concurrency,
    maxRequestRetries: 0,
    maxRequestsPerCrawl: Number.isSafeInteger(args.maxPages) ? args.maxPages : undefined,
    sameDomainDelaySecs: sameDomainDelayMs / 1000,
    useSessionPool: false,
    persistCookiesPerSession: false,
    async requestHandler({ enqueueLinks }) {
      if (origins.size === 1) await enqueueLinks({ strategy: 'same-hostname' });
      else {
        await enqueueLinks({
          strategy: 'all',
          transformRequestFunction: (request) => (origins.has(new URL(request.url).origin) ? request : false),
        });
      }
    },
    failedRequestHandler() {
      failed++;
    },
  },
  config,
);

const startedAt = performance.now();
const stats = await crawler.run(args.urls);
process.stdout.write(`${JSON.stringify(summarise(stats.requestsFinished, failed, startedAt))}\n`);
// Crawlee leaves timers (system status, event manager) that would keep the process alive a while.
process.exit(0);
