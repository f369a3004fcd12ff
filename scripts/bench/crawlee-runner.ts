/**
 * The Crawlee reference: a CheerioCrawler tuned for raw speed, keeping nothing durable (in-memory
 * request queue, no dataset, no key-value store on disk). Its request handler only enqueues
 * same-hostname links, like ackcrawl's link extraction; unlike ackcrawl it stores no page bodies.
 *
 *   node dist/scripts/bench/crawlee-runner.js --url http://127.0.0.1:PORT/ [--concurrency 200] [--max-pages N]
 *
 * Tuning (all on the crawler's side, none on the site's): minConcurrency = maxConcurrency so the
 * autoscaled pool starts at full speed instead of ramping up from 1, no retries, no session pool
 * (the site sets no cookies), log level WARNING so per-minute statistics do not touch stdout.
 */
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';
import { MemoryStorage } from '@crawlee/memory-storage';
import { parseRunnerArgs, summarise } from './runner-args.js';

const args = parseRunnerArgs(200);
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
    useSessionPool: false,
    persistCookiesPerSession: false,
    async requestHandler({ enqueueLinks }) {
      await enqueueLinks({ strategy: 'same-hostname' });
    },
    failedRequestHandler() {
      failed++;
    },
  },
  config,
);

const startedAt = performance.now();
const stats = await crawler.run([args.url]);
process.stdout.write(`${JSON.stringify(summarise(stats.requestsFinished, failed, startedAt))}\n`);
// Crawlee leaves timers (system status, event manager) that would keep the process alive a while.
process.exit(0);
