/**
 * `npm run bench -- --http-client`: what one request costs the crawler's process, by HTTP client.
 * The same site (its own process, not measured) is fetched in this process, in alternating rounds,
 * by:
 *
 * - `node:http`: `http.get` on a keep-alive agent, the bare loop's fetch;
 * - `got`: `got.stream` with the crawler's options (timeouts, no retries, decompression), on the
 *   same agent;
 * - `fetcher`: the crawler's own `Fetcher` (got, its body cap, stale-socket resend and watchdog),
 *   on the agents a crawl with `--allow-private` uses.
 *
 * Each reads the whole body. Figures are CPU microseconds of this process per request, the median
 * of the rounds, and each client against `node:http` in the same run.
 *
 *   npm run bench -- --http-client [--requests 10000] [--concurrency 32] [--rounds 5]
 */
import { Agent, get } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { parseArgs } from 'node:util';
import got from 'got';
import { createAgents } from '../../../client/crawler/fetch/agents.js';
import { crawlerGotOptions, Fetcher } from '../../../client/crawler/fetch/fetcher.js';
import { fetchSettingsOf, parseCrawlSettings } from '../../../shared/crawl-settings/index.js';
import { BenchOptionsError, optionsOrExit } from '../options-error.js';
import { startSiteProcess } from '../site-process.js';
import { warmSite } from '../warm-site.js';

export const HTTP_CLIENT_BENCH_USAGE = `usage: npm run bench -- --http-client [--requests 10000] [--concurrency 32] [--rounds 5]

CPU of this process per request for node:http, got with the crawler's options, and the crawler's
Fetcher, against one local site, in alternating rounds.`;

type Fetch = (url: string) => Promise<number>;

interface ClientFigures {
  name: string;
  /** CPU microseconds per request, one per round. */
  rounds: number[];
}

export async function httpClientBenchMain(argv: string[]): Promise<number> {
  const parsed = optionsOrExit('http-client bench', HTTP_CLIENT_BENCH_USAGE, argv, () => parseOptions(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const say = (text: string): void => void process.stderr.write(`${text}\n`);
  const site = await startSiteProcess({ pages: o.requests + 1, seed: 1 });
  try {
    await warmSite(site, o.requests + 1);
    const clients = buildClients(o.concurrency);
    const figures: ClientFigures[] = clients.map(([name]) => ({ name, rounds: [] }));
    // One unmeasured pass each, so every client is compiled before its first measured round.
    for (const [, fetch] of clients)
      await fetchAll(fetch, site.url, Math.min(2_000, o.requests), o.concurrency);
    for (let round = 0; round < o.rounds; round++) {
      for (const [index, [name, fetch]] of clients.entries()) {
        const micros = await fetchAll(fetch, site.url, o.requests, o.concurrency);
        figures[index]?.rounds.push(micros);
        say(`round ${round + 1}: ${name} ${micros.toFixed(1)} µs of CPU per request`);
      }
    }
    report(figures, o);
    return 0;
  } finally {
    await site.close();
  }
}

interface HttpClientBenchOptions {
  requests: number;
  concurrency: number;
  rounds: number;
}

function parseOptions(argv: string[]): HttpClientBenchOptions {
  const { values } = parseArgs({
    args: argv.filter((arg) => arg !== '--http-client'),
    options: {
      requests: { type: 'string', default: '10000' },
      concurrency: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '5' },
    },
  });
  const problems: string[] = [];
  const int = (name: string, text: string): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) problems.push(`--${name} must be a positive integer, got "${text}"`);
    return n;
  };
  const options = {
    requests: int('requests', values.requests),
    concurrency: int('concurrency', values.concurrency),
    rounds: int('rounds', values.rounds),
  };
  if (problems.length > 0) throw new BenchOptionsError(problems);
  return options;
}

function buildClients(concurrency: number): [string, Fetch][] {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const settings = fetchSettingsOf(parseCrawlSettings({ seeds: ['http://127.0.0.1/'], allowPrivate: true }));
  const fetcher = new Fetcher(settings, createAgents({ allowPrivate: true, maxSockets: concurrency }));
  const client = got.extend(
    crawlerGotOptions(settings, { http: agent, https: new HttpsAgent({ keepAlive: true }) }),
  );
  const viaHttp: Fetch = (url) =>
    new Promise((resolve, reject) => {
      get(url, { agent }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      }).on('error', reject);
    });
  const viaGot: Fetch = (url) =>
    new Promise((resolve, reject) => {
      let bytes = 0;
      const stream = client.stream(url);
      stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
      stream.on('end', () => resolve(bytes));
      stream.on('error', reject);
    });
  const viaFetcher: Fetch = async (url) => (await fetcher.fetch(url)).body.length;
  return [
    ['node:http', viaHttp],
    ['got', viaGot],
    ['fetcher', viaFetcher],
  ];
}

/** Fetches pages /p/1 … /p/n, `concurrency` at a time; returns CPU µs of this process per request. */
async function fetchAll(fetch: Fetch, siteUrl: string, n: number, concurrency: number): Promise<number> {
  let next = 1;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next <= n) {
        const page = next++;
        const bytes = await fetch(new URL(`p/${page}`, siteUrl).href);
        if (bytes === 0) throw new Error(`page ${page} came back empty`);
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

function report(figures: ClientFigures[], o: HttpClientBenchOptions): void {
  const reference = median(figures[0]?.rounds ?? [NaN]);
  const rows = figures.map((f) => ({
    client: f.name,
    medianMicros: Math.round(median(f.rounds) * 10) / 10,
    rounds: f.rounds.map((r) => Math.round(r * 10) / 10),
    vsNodeHttp: Math.round((median(f.rounds) / reference) * 100) / 100,
  }));
  const lines = ['client      µs CPU/request (median)  vs node:http  rounds'];
  for (const r of rows) {
    lines.push(
      `${r.client.padEnd(11)} ${String(r.medianMicros).padStart(24)}  ${`${r.vsNodeHttp}x`.padStart(12)}  ${r.rounds.join(' ')}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), options: o, clients: rows })}\n`);
}
