/**
 * Elements whose start and end lay out a block: white space just inside or around their tags is
 * never rendered (CSS collapses it at a block's edges), and the text of each block is read on its
 * own line anyway (main-text.ts).
 */
const BLOCK_TAGS = [
  'address',
  'article',
  'blockquote',
  'body',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'form',
  'h[1-6]',
  'head',
  'header',
  'hr',
  'html',
  'li',
  'link',
  'main',
  'meta',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'title',
  'tr',
  'ul',
].join('|');

/** White space after a block tag and before any tag, or after any tag and before a block tag. */
const LAYOUT_SPACE = `(?<=<\\/?(?:${BLOCK_TAGS})(?:[\\s/][^<>]*)?>)\\s+(?=<)|(?<=>)\\s+(?=<\\/?(?:${BLOCK_TAGS})[\\s/>])`;
/** Where white space is the text itself (group 1): kept as it is. */
const PRESERVED = '(<(pre|textarea|listing|plaintext)\\b[\\s\\S]*?(?:<\\/\\2\\s*>|$))';
const SCAN = new RegExp(`${PRESERVED}|${LAYOUT_SPACE}`, 'gi');

/**
 * Drops the runs of white space between tags that a browser would not render because a block
 * starts or ends there: `</p>\n  <p>`, `<div>\n  <a …>`, `</li>\n</ul>`. On real pages they are two
 * thirds of all text nodes, and every node costs the DOM and Readability's walks. White space
 * between two inline tags (`</a> <a>`) separates words and stays; so does all of it inside `<pre>`
 * and `<textarea>`. Blocks are read each on its own line (main-text.ts), so no words run together.
 */
export function dropLayoutWhitespace(html: string): string {
  return html.replace(SCAN, (_match, preserved: string | undefined) => preserved ?? '');
}
