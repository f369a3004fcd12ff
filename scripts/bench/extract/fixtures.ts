import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../paths.js';

/** The labelled pages: `NAME.html` (the page as fetched) beside `NAME.txt` (its main text). */
export const FIXTURE_DIR = join(repoRoot, 'scripts', 'bench', 'fixtures', 'extract');

export interface LabelledPage {
  name: string;
  htmlPath: string;
  html: Buffer;
  label: string;
}

export function labelledPages(dir: string = FIXTURE_DIR): LabelledPage[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.html'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.html'.length);
      const htmlPath = join(dir, f);
      return {
        name,
        htmlPath,
        html: readFileSync(htmlPath),
        label: readFileSync(join(dir, `${name}.txt`), 'utf8'),
      };
    });
}
