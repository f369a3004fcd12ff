import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';

/** Where the dashboard is served; `/` sends a browser there. */
export const DASHBOARD_PREFIX = '/ui/';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

/**
 * The page may load and run only what this server sends: no inline script, no other origin, no
 * framing (clickjacking). Inline styles are allowed: uPlot sizes its canvas with them.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The built dashboard (dist/master/dashboard/ui, made by `npm run build`). */
export function defaultDashboardDir(): string {
  return fileURLToPath(new URL('./ui/', import.meta.url));
}

function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (path: string, file: string): void => {
    const type = TYPES[extname(file)];
    if (type === undefined) return;
    const body = readFileSync(file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    assets.set(path, { body, type, etag });
  };
  const walk = (folder: string, prefix: string): void => {
    for (const name of readdirSync(folder)) {
      const file = join(folder, name);
      if (statSync(file).isDirectory()) walk(file, `${prefix}${name}/`);
      else add(`${prefix}${name}`, file);
    }
  };
  walk(dir, '');
  // uPlot, from the package that depends on it (no copy in the repo, no CDN).
  const uplot = createRequire(import.meta.url).resolve('uplot');
  add('vendor/uPlot.esm.js', join(uplot, '..', 'uPlot.esm.js'));
  add('vendor/uPlot.min.css', join(uplot, '..', 'uPlot.min.css'));
  return assets;
}

/**
 * The dashboard's files, read once at start (they are small and never change while the master
 * runs). Open: nothing in them is secret; every number the page shows comes from the API, which
 * asks for a token. `GET /` and `GET /ui` redirect to `/ui/`; an unknown file under /ui/ is the
 * API's 404.
 */
export function dashboardAssets(dir: string = defaultDashboardDir()): Middleware {
  let assets: Map<string, Asset>;
  try {
    assets = loadAssets(dir);
  } catch {
    assets = new Map();
  }
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/' || ctx.path === '/ui') {
      ctx.redirect(DASHBOARD_PREFIX);
      return;
    }
    if (!ctx.path.startsWith(DASHBOARD_PREFIX)) return next();
    const name = ctx.path.slice(DASHBOARD_PREFIX.length) || 'index.html';
    const asset = assets.get(name);
    if (asset === undefined) return next();
    for (const [header, value] of Object.entries(SECURITY_HEADERS)) ctx.set(header, value);
    ctx.set('cache-control', 'no-cache');
    ctx.set('etag', asset.etag);
    if (ctx.get('if-none-match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
