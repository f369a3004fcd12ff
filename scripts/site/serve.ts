/**
 * Runs the generated site as its own process, so a benchmark can keep the site's CPU out of the
 * crawler's figures. Prints one JSON line `{"url":...,"port":...}` on stdout once listening and
 * serves until SIGTERM/SIGINT (or until an IPC parent disconnects).
 *
 *   node dist/scripts/site/serve.js --pages 20000 [--links-per-page 20] [--page-bytes 10240]
 *     [--seed 1] [--host 127.0.0.1] [--port 0] [--broken-links] [--redirect-links] [--disallow PATH]
 *
 * When started with an IPC channel it answers `{type:'stats'}` with `{type:'stats', stats}` and
 * `{type:'reset-stats'}` with `{type:'stats', stats}` after zeroing the counters.
 */
import { parseArgs } from 'node:util';
import { startGeneratedSite } from './generated-site.js';
import { serveOverIpc } from './serve-over-ipc.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '20000' },
    'links-per-page': { type: 'string', default: '20' },
    'page-bytes': { type: 'string', default: '10240' },
    seed: { type: 'string', default: '1' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    'broken-links': { type: 'boolean', default: false },
    'redirect-links': { type: 'boolean', default: false },
    disallow: { type: 'string' },
  },
});

const site = await startGeneratedSite({
  pages: Number(values.pages),
  linksPerPage: Number(values['links-per-page']),
  pageBytes: Number(values['page-bytes']),
  seed: Number(values.seed),
  host: values.host,
  port: Number(values.port),
  brokenLinks: values['broken-links'],
  redirectLinks: values['redirect-links'],
  ...(values.disallow === undefined ? {} : { disallow: values.disallow }),
});

serveOverIpc(site, { url: site.url, port: site.port });
