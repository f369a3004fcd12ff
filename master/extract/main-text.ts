/**
 * The text of an extracted article element, as a reader sees it: block elements (paragraphs,
 * headings, list items, table rows, line breaks) end a line, runs of white space inside a block
 * become one space, and blocks are separated by a blank line. Readability's own `textContent` keeps
 * the markup's white space instead, which runs paragraphs together.
 */
const BLOCKS = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'DD',
  'DIV',
  'DL',
  'DT',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'TABLE',
  'TR',
  'UL',
]);
const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG']);

interface TextNodeLike {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<TextNodeLike>;
}

const TEXT_NODE = 3;
const ELEMENT_NODE = 1;

export function blockText(root: TextNodeLike): string {
  const blocks: string[] = [];
  let line = '';
  const flush = (): void => {
    const text = line.replace(/\s+/g, ' ').trim();
    if (text) blocks.push(text);
    line = '';
  };
  // Iterative walk: hostile pages nest elements deeper than the call stack goes.
  const stack: (TextNodeLike | null)[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === undefined) break;
    if (node === null) {
      flush(); // the end of a block element
      continue;
    }
    if (node.nodeType === TEXT_NODE) {
      line += node.textContent ?? '';
      continue;
    }
    if (node.nodeType !== ELEMENT_NODE) continue;
    const name = node.nodeName.toUpperCase();
    if (SKIP.has(name)) continue;
    if (name === 'BR') {
      flush();
      continue;
    }
    const block = BLOCKS.has(name);
    if (block) {
      flush();
      stack.push(null);
    } else if (name === 'TD' || name === 'TH') {
      line += ' ';
    }
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (child) stack.push(child);
    }
  }
  flush();
  return blocks.join('\n\n');
}
