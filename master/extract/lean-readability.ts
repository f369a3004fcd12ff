import { Readability } from '@mozilla/readability';

/** `display: none` or `visibility: hidden` among an inline style's declarations. */
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;

interface ElementLike {
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  className?: unknown;
  getElementsByTagName?(name: string): ArrayLike<unknown>;
}

/** The methods of Readability 0.6 replaced below; test/unit/extract-lean-readability checks they exist. */
export const REPLACED_METHODS = ['_isProbablyVisible', '_fixRelativeUris', '_getAllNodesWithTag'] as const;

/**
 * Readability with the same choices, made for less: its profile over linkedom (npm run bench --
 * --extract) spent a sixth of its time in three places that the cleaner does not need as they are.
 *
 * - `_isProbablyVisible` read `node.style`, which makes linkedom build and parse a style object for
 *   every element; reading the `style` attribute's text gives the same answer (and counts
 *   `display: none !important`, which linkedom's parse missed).
 * - `_fixRelativeUris` rewrote every link and image of the article to an absolute URL: only its
 *   text is kept.
 * - `_getAllNodesWithTag` of one tag went through a CSS selector engine; linkedom's
 *   getElementsByTagName gives the same elements in the same (document) order.
 *
 * The main texts, titles and bylines of the bench's pages are the same to the byte. These are
 * private methods: the unit test fails if an upgrade of @mozilla/readability renames them.
 */
export class LeanReadability<T = string> extends Readability<T> {}

type Internals = Record<(typeof REPLACED_METHODS)[number], (...args: never[]) => unknown>;
const base = Readability.prototype as unknown as Internals;
const lean = LeanReadability.prototype as unknown as Record<string, unknown>;

lean._isProbablyVisible = (node: ElementLike): boolean => {
  const style = node.getAttribute('style');
  if (style !== null && HIDDEN_STYLE.test(style)) return false;
  if (node.hasAttribute('hidden')) return false;
  return (
    node.getAttribute('aria-hidden') !== 'true' ||
    (typeof node.className === 'string' && node.className.includes('fallback-image'))
  );
};
lean._fixRelativeUris = (): void => undefined;
lean._getAllNodesWithTag = function (
  this: unknown,
  node: ElementLike,
  tagNames: string[],
): ArrayLike<unknown> {
  const [only] = tagNames;
  if (tagNames.length === 1 && only !== undefined && node.getElementsByTagName) {
    return node.getElementsByTagName(only);
  }
  return (base._getAllNodesWithTag as (n: ElementLike, t: string[]) => ArrayLike<unknown>).call(
    this,
    node,
    tagNames,
  );
};
