import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { crawlRequestSchema, type CrawlRequest, type CrawlStatus } from '../../shared/protocol/crawl-api.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';

export interface CrawlApiDeps {
  token: string | undefined;
  status: () => CrawlStatus;
  submit: (request: CrawlRequest) => Promise<{ accepted: number }>;
  /** "Why not yet?" for one URL. */
  why: (url: string) => Promise<WhyAnswer>;
  logger: Logger;
}

const MAX_BODY_BYTES = 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, code: string, message: string): void {
  send(res, status, { error: { code, message } });
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = Buffer.from((req.headers.authorization ?? '').replace(/^Bearer\s+/i, ''));
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new AppError('BODY_TOO_LARGE', 'request body over 1 MiB', { status: 413 });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new AppError('BAD_JSON', 'request body is not JSON', { status: 400 });
  }
}

/**
 * The scheduler's HTTP side: `GET /health` (open), `GET /crawl` and `POST /crawl` (bearer token
 * when the scheduler has one). Every error is JSON `{ error: { code, message } }`.
 */
export function createCrawlApi(deps: CrawlApiDeps) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/health' && req.method === 'GET') {
      const { status, progress } = deps.status();
      return send(res, 200, { status, ...progress });
    }
    if (path === '/why') return whyRoute(req, res, deps);
    if (path !== '/crawl')
      return error(
        res,
        404,
        'NOT_FOUND',
        'try GET /health, GET or POST /crawl, GET /why?url=…, or a WebSocket on /crawlers',
      );
    if (!authorized(req, deps.token))
      return error(res, 401, 'UNAUTHORIZED', 'a valid bearer token is required');
    if (req.method === 'GET') return send(res, 200, deps.status());
    if (req.method !== 'POST') return error(res, 405, 'METHOD_NOT_ALLOWED', 'use GET or POST');
    void (async () => {
      try {
        const parsed = crawlRequestSchema.safeParse(await readJson(req));
        if (!parsed.success) {
          const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
          return error(res, 400, 'INVALID_CRAWL', issues.join('; '));
        }
        send(res, 202, await deps.submit(parsed.data));
      } catch (err) {
        const status = err instanceof AppError ? (err.status ?? 500) : 500;
        const code = err instanceof AppError ? err.code : 'INTERNAL';
        if (status >= 500) deps.logger.error({ err }, 'crawl API failure');
        error(res, status, code, err instanceof Error ? err.message : String(err));
      }
    })();
  };
}

/** `GET /why?url=…`: where the URL is in the crawl and what it waits for. */
function whyRoute(req: IncomingMessage, res: ServerResponse, deps: CrawlApiDeps): void {
  if (!authorized(req, deps.token))
    return error(res, 401, 'UNAUTHORIZED', 'a valid bearer token is required');
  if (req.method !== 'GET') return error(res, 405, 'METHOD_NOT_ALLOWED', 'use GET');
  const url = new URL(req.url ?? '/', 'http://scheduler').searchParams.get('url');
  if (!url) return error(res, 400, 'MISSING_URL', 'give the URL to explain: GET /why?url=https://…');
  void deps.why(url).then(
    (answer) => send(res, 200, answer),
    (err: unknown) => {
      const status =
        err instanceof AppError ? (err.status ?? (err.name === 'InvalidInputError' ? 400 : 500)) : 500;
      const code = err instanceof AppError ? err.code : 'INTERNAL';
      if (status >= 500) deps.logger.error({ err }, 'why failed');
      error(res, status, code, err instanceof Error ? err.message : String(err));
    },
  );
}
