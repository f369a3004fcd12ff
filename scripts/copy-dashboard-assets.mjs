// The dashboard's static files (HTML, CSS, icons) beside its compiled scripts in dist/, so the
// package serves them as built (no build step for the user). Part of `npm run build`.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';

const from = 'master/dashboard/ui';
const to = 'dist/master/dashboard/ui';
mkdirSync(to, { recursive: true });
for (const name of readdirSync(from)) {
  if (['.html', '.css', '.svg', '.png', '.ico'].includes(extname(name)))
    copyFileSync(join(from, name), join(to, name));
}
