/**
 * `npm run demo`: crawls a small generated site (300 pages, plus a link to a 404 page and one to a
 * page that always answers 500, so the summary shows failures) with the ackcrawl CLI, then says
 * where the page records are and how to look at them. Exits with the crawl's exit code.
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ackcrawlCli, ackcrawlCliBuilt, repoRoot } from '../paths.js';
import { startGeneratedSite } from '../site/generated-site.js';

const OUT = join(repoRoot, 'crawl-output', 'demo');

if (!ackcrawlCliBuilt()) {
  process.stderr.write(
    `demo: ${relative(process.cwd(), ackcrawlCli)} is missing. Build first (npm run build); ` +
      'if the build succeeds and the file is still missing, the CLI is not written yet.\n',
  );
  process.exit(1);
}

const site = await startGeneratedSite({ pages: 300, brokenLinks: true });
process.stderr.write(`demo site: ${site.url} (300 pages, plus /missing → 404 and /error → 500)\n`);
// A fresh folder each time: the same --out would resume the previous demo crawl instead.
rmSync(OUT, { recursive: true, force: true });

const args = [
  'crawl',
  site.url,
  '--out',
  OUT,
  '--allow-private',
  '--host-delay',
  '10',
  '--retry-delay',
  '200',
];
const child = spawn(process.execPath, [ackcrawlCli, ...args], { stdio: 'inherit' });
// Ctrl-C reaches the crawler too (same process group); wait for it to drain rather than dying first.
const ignore = (): void => undefined;
process.on('SIGINT', ignore);
process.on('SIGTERM', () => child.kill('SIGTERM'));
const code = await new Promise<number>((resolve) =>
  child.once('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
);
await site.close();

const shown = relative(process.cwd(), OUT) || '.';
const files = listFiles(OUT);
process.stdout.write(`\nResults in ${shown}/ — ${files.length} file(s): ${files.join(', ') || 'none'}\n`);
const records = files.filter((f) => /^pages-.*\.jsonl$/.test(f));
if (records[0]) {
  const peek = `head -c 600 ${join(shown, records[0])}`;
  const all = join(shown, 'pages-*.jsonl');
  process.stdout.write(
    `Look at them:\n  ${peek}\n` +
      `  cat ${all} | wc -l    # one JSON record per page\n` +
      `  grep -v '"outcome":"ok"' ${all} | cut -c1-400    # the failures: /missing and /error\n`,
  );
}
process.exit(code);

function listFiles(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
