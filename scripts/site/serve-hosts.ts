/**
 * Runs the many-hosts site (hosts-site.ts) as its own process, for `npm run bench -- --hosts`.
 * Takes the whole site as one JSON argument (the bench plans the hosts: scripts/bench/hosts/plan.ts),
 * prints `{"urls":[...]}` on stdout once every host listens, and answers `{type:'stats'}` and
 * `{type:'reset-stats'}` over IPC like serve.js. Serves until SIGTERM/SIGINT or the parent leaves.
 *
 *   node dist/scripts/site/serve-hosts.js '{"hosts":[{"address":"127.0.0.2","latencyMs":80,"pages":100}],
 *     "politeness":{"concurrency":1,"delayMs":150,"toleranceMs":5},"seed":1,"pageBytes":10240,"linksPerPage":20}'
 */
import { startHostsSite, type HostsSiteOptions } from './hosts-site.js';
import { serveOverIpc } from './serve-over-ipc.js';

const options = JSON.parse(process.argv[2] ?? '') as HostsSiteOptions;
const site = await startHostsSite(options);

serveOverIpc(site, { urls: site.urls });
