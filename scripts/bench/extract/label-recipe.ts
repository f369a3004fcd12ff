import { parseHTML } from 'linkedom';
import { z } from 'zod';

/**
 * How a page's label (its main text, by hand) is made from the page, so that the repository keeps
 * the recipe instead of the text: the article's container, then the text blocks found in it, less
 * the ones removed by hand, each block exactly as `labelBlocks` renders it.
 */
export const labelRecipeSchema = z.strictObject({
  /** SHA-256 of the page's bytes, as trafilatura's sdist has them. */
  pageSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** A CSS selector; its first match in document order is the article's container. */
  container: z.string().min(1),
  /** Blocks that are no part of the article (share buttons, tag lists, credits): every block equal to one goes. */
  removals: z.array(z.string().min(1)),
  /** SHA-256 of the label's UTF-8 bytes: what the recipe must rebuild. */
  labelSha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type LabelRecipe = z.infer<typeof labelRecipeSchema>;

export const labelRecipesSchema = z.strictObject({
  pages: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/), labelRecipeSchema),
});

/** The elements a label's text is made of. */
export const BLOCK_SELECTOR = 'p, h1, h2, h3, h4, h5, h6, li, pre';

type Element = ReturnType<typeof parseHTML>['document']['documentElement'];

/**
 * The text blocks of a container, in document order: each paragraph, heading, list item and
 * preformatted block that is not inside another one (whose text already holds it). A block's text
 * is its textContent with every run of white space (non-breaking spaces too) made one space and
 * trimmed; a preformatted block keeps its lines and is only trimmed. Empty blocks are dropped.
 */
export function labelBlocks(container: Element): string[] {
  const blocks: string[] = [];
  for (const element of container.querySelectorAll(BLOCK_SELECTOR)) {
    if (insideAnotherBlock(element, container)) continue;
    const raw = element.textContent ?? '';
    const text = element.tagName === 'PRE' ? raw.trim() : raw.replace(/\s+/g, ' ').trim();
    if (text !== '') blocks.push(text);
  }
  return blocks;
}

function insideAnotherBlock(element: Element, container: Element): boolean {
  for (let up = element.parentElement; up !== null && up !== container; up = up.parentElement) {
    if (up.matches(BLOCK_SELECTOR)) return true;
  }
  return false;
}

/** The label of a page: its kept blocks separated by blank lines, with a final newline. */
export function rebuildLabel(html: string, recipe: Pick<LabelRecipe, 'container' | 'removals'>): string {
  const { document } = parseHTML(html);
  const container = document.querySelector(recipe.container);
  if (container === null) throw new Error(`no element matches the container "${recipe.container}"`);
  const blocks = labelBlocks(container);
  const present = new Set(blocks);
  const stale = recipe.removals.filter((r) => !present.has(r));
  if (stale.length > 0) throw new Error(`removals that match no block: ${JSON.stringify(stale)}`);
  const removals = new Set(recipe.removals);
  const kept = blocks.filter((b) => !removals.has(b));
  return kept.length === 0 ? '' : `${kept.join('\n\n')}\n`;
}
