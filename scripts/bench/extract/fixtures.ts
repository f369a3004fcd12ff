import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../../../shared/ports/blob-store.js';
import { encodeBody } from '../../../shared/text/body-encoding.js';
import { repoRoot } from '../../paths.js';
import { labelRecipesSchema, rebuildLabel, type LabelRecipe } from './label-recipe.js';

/**
 * The labelled pages. The pages are third-party content (trafilatura 0.9.0's tests/cache/, under
 * the GPL), so the repository does not ship them: fetch-pages.sh puts them under .cache/, and
 * labels.json says how each page's label (its main text) is rebuilt from it (docs/extract.md).
 */
export const PAGES_DIR = join(repoRoot, '.cache', 'extract-fixtures');
export const LABELS_FILE = join(repoRoot, 'scripts', 'bench', 'extract', 'labels.json');
export const FETCH_SCRIPT = join(repoRoot, 'scripts', 'bench', 'extract', 'fetch-pages.sh');
export const FETCH_COMMAND = 'bash scripts/bench/extract/fetch-pages.sh';

/** The pages are not there and could not be fetched, or are not the pages the labels were made from. */
export class LabelledPagesError extends Error {
  override readonly name = 'LabelledPagesError';
}

export interface LabelledPage {
  name: string;
  htmlPath: string;
  html: Buffer;
  label: string;
}

export function labelRecipes(): Record<string, LabelRecipe> {
  return labelRecipesSchema.parse(JSON.parse(readFileSync(LABELS_FILE, 'utf8'))).pages;
}

/**
 * Runs fetch-pages.sh for every page of labels.json: nothing to do when they are there already;
 * else the sdist from .cache/, or downloaded with pip. The script says on stderr what it does.
 */
export function fetchPages(): void {
  const run = spawnSync('bash', [FETCH_SCRIPT, ...Object.keys(labelRecipes())], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0) {
    const why = run.error?.message ?? `exit ${run.status ?? run.signal}, its message is above`;
    throw new LabelledPagesError(
      `the labelled pages could not be fetched (${why}); they come from trafilatura 0.9.0's sdist ` +
        `on PyPI: run \`${FETCH_COMMAND}\` once this machine reaches PyPI`,
    );
  }
}

/** One page's bytes, checked against labels.json. Does not fetch: see fetchPages. */
export function labelledPageHtml(name: string, recipe: LabelRecipe = recipeOf(name)): Buffer {
  const htmlPath = join(PAGES_DIR, `${name}.html`);
  if (!existsSync(htmlPath)) {
    throw new LabelledPagesError(`${htmlPath} is missing: run \`${FETCH_COMMAND}\``);
  }
  const html = readFileSync(htmlPath);
  const sha = sha256Hex(html);
  if (sha !== recipe.pageSha256) {
    throw new LabelledPagesError(
      `${htmlPath} is not the page labels.json was made from (SHA-256 ${sha}, want ` +
        `${recipe.pageSha256}): delete .cache/extract-fixtures and run \`${FETCH_COMMAND}\``,
    );
  }
  return html;
}

/** Every labelled page with its label rebuilt and checked. Does not fetch: see fetchPages. */
export function labelledPages(): LabelledPage[] {
  return Object.entries(labelRecipes())
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, recipe]) => {
      const html = labelledPageHtml(name, recipe);
      return { name, htmlPath: join(PAGES_DIR, `${name}.html`), html, label: labelOf(name, html, recipe) };
    });
}

/** A page's label, rebuilt from its bytes (decoded as the crawler decodes a body) by its recipe. */
export function labelOf(name: string, html: Buffer, recipe: LabelRecipe = recipeOf(name)): string {
  const decoded = encodeBody(html, 'text/html');
  if (decoded.encoding !== 'utf8') throw new LabelledPagesError(`${name}: the page does not decode as text`);
  let label: string;
  try {
    label = rebuildLabel(decoded.body, recipe);
  } catch (err) {
    throw new LabelledPagesError(`${name}: ${(err as Error).message}`, { cause: err });
  }
  const sha = sha256Hex(Buffer.from(label, 'utf8'));
  if (sha !== recipe.labelSha256) {
    throw new LabelledPagesError(
      `${name}: the label rebuilt by labels.json has SHA-256 ${sha}, not ${recipe.labelSha256} ` +
        '(a change to the recipe, the rebuild or the DOM library?)',
    );
  }
  return label;
}

function recipeOf(name: string): LabelRecipe {
  const recipe = labelRecipes()[name];
  if (recipe === undefined) throw new LabelledPagesError(`no page "${name}" in ${LABELS_FILE}`);
  return recipe;
}
