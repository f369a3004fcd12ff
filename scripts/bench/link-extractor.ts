/**
 * Micro-benchmark of link extraction on a synthetic 10 KB page with 20 links (plus head links, a script
 * holding a fake `<a href>`, and entities), on one core. It also times the two ways of tokenising that
 * `tag-scanner.ts` chose between, so a parse5 upgrade that changes the trade-off shows up here.
 *
 * Run: npm run build && node dist/scripts/bench/link-extractor.js [seconds per case, default 2]
 */
import { Tokenizer } from 'parse5';
import { SAXParser } from 'parse5-sax-parser';
import { extractLinks } from '../../client/crawler/parse/link-extractor.js';
import { scanTags, type TagVisitor } from '../../client/crawler/parse/tag-scanner.js';

const PAGE_URL = 'https://bench.example/articles/2024/some-article.html';

function syntheticPage(targetBytes: number, linkCount: number): string {
  let page =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bench page &amp; friends</title>' +
    '<link rel="stylesheet" href="/static/site.css"><meta name="viewport" content="width=device-width">' +
    '<script>var tpl = "<a href=\'/not-a-link\'>x</a>"; if (a < b && c > d) { run(); }</script>' +
    '</head><body><header class="site-header"><nav><ul>';
  let links = 0;
  for (let i = 0; page.length < targetBytes; i++) {
    page +=
      '<p class="para">Lorem ipsum dolor sit amet, consectetur adipiscing elit &mdash; sed do eiusmod ' +
      'tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.';
    if (links < linkCount) {
      page += ` <a href="/section/${i % 5}/page-${i}.html?ref=nav&amp;pos=${i}" class="link">Read ${i}</a>`;
      links++;
    }
    page += '</p>\n';
  }
  return `${page}</ul></nav></header></body></html>`;
}

function pagesPerSecond(name: string, seconds: number, run: () => void): void {
  const warmUpUntil = performance.now() + 300;
  while (performance.now() < warmUpUntil) run();
  let pages = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) run();
    pages += 100;
  }
  const rate = Math.round((pages * 1000) / (performance.now() - start));
  console.log(`${name.padEnd(44)} ${String(rate).padStart(7)} pages/s`);
}

const seconds = Number(process.argv[2] ?? 2);
const page = syntheticPage(10 * 1024, 20);
const sample = extractLinks(page, PAGE_URL);
console.log(`page: ${page.length} chars, ${sample.links.length} links extracted; ${seconds}s per case`);

const ignoreTags: TagVisitor = { startTag() {}, endTag() {} };
pagesPerSecond('extractLinks (TextSkippingTokenizer)', seconds, () => extractLinks(page, PAGE_URL));
pagesPerSecond('scanTags, TextSkippingTokenizer', seconds, () =>
  scanTags(page, ignoreTags, { scripting: false }),
);
pagesPerSecond('scanTags, unmodified parse5 Tokenizer', seconds, () =>
  scanTags(page, ignoreTags, { scripting: false, createTokenizer: (handler) => new Tokenizer({}, handler) }),
);
pagesPerSecond('parse5-sax-parser, startTag listener', seconds, () => {
  const parser = new SAXParser();
  parser.on('startTag', () => {});
  parser.end(page);
});
