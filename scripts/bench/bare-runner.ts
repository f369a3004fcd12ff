/**
 * The reference ceiling: node:http with a keep-alive agent, parse5's SAX parser for links, an
 * in-memory Set for dedup, a fixed number of requests in flight, and nothing durable. Whatever a
 * real crawler adds (politeness, acknowledgements, durable queues and page records) costs against this.
 *
 *   node dist/scripts/bench/bare-runner.js --url http://127.0.0.1:PORT/ [--url …] [--concurrency 64] [--max-pages N]
 *
 * With several seeds (the many-hosts bench), links are followed to any seed's origin. The loop
 * knows no politeness: `--concurrency` requests are in flight whatever their hosts.
 */
import { Agent, get } from 'node:http';
import { parseRunnerArgs, summarise } from './runner-args.js';
import { extractHrefs } from './sax-links.js';

const args = parseRunnerArgs(64);
const origins = new Set(args.urls.map((url) => new URL(url).origin));
const agent = new Agent({ keepAlive: true, maxSockets: args.concurrency });
const seen = new Set<string>(args.urls);
const queue: string[] = [...seen];
let next = 0; // queue[next..] is still to fetch; a head index keeps dequeue O(1)
let ok = 0;
let failed = 0;

function fetchPage(url: string): Promise<{ status: number; html: string; isHtml: boolean }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          html: Buffer.concat(chunks).toString('utf8'),
          isHtml: (res.headers['content-type'] ?? '').includes('text/html'),
        }),
      );
      res.on('error', reject);
    }).on('error', reject);
  });
}

function resolveLinks(hrefs: string[], base: string): string[] {
  const out: string[] = [];
  for (const href of hrefs) {
    if (!URL.canParse(href, base)) continue;
    const url = new URL(href, base);
    if (!origins.has(url.origin)) continue;
    url.hash = '';
    out.push(url.href);
  }
  return out;
}

async function crawl(url: string): Promise<void> {
  try {
    const page = await fetchPage(url);
    if (page.status !== 200) {
      failed++;
      return;
    }
    ok++;
    if (!page.isHtml) return;
    for (const link of resolveLinks(extractHrefs(page.html), url)) {
      if (seen.size >= args.maxPages || seen.has(link)) continue;
      seen.add(link);
      queue.push(link);
    }
  } catch {
    failed++;
  }
}

const startedAt = performance.now();
await new Promise<void>((resolve) => {
  let active = 0;
  const pump = (): void => {
    while (active < args.concurrency && next < queue.length) {
      const url = queue[next++] as string;
      active++;
      void crawl(url).then(() => {
        active--;
        pump();
      });
    }
    if (active === 0 && next === queue.length) resolve();
  };
  pump();
});
agent.destroy();
process.stdout.write(`${JSON.stringify(summarise(ok, failed, startedAt))}\n`);
