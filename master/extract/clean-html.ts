import { parseHTML } from 'linkedom';
import { AppError } from '../../shared/errors.js';
import type { CleanedPage } from './cleaned-page.js';
import { pageLanguage } from './language.js';
import { blockText } from './main-text.js';
import { pageMetadata, publishedAtOf } from './page-metadata.js';
import { dropLayoutWhitespace } from './layout-whitespace.js';
import { LeanReadability } from './lean-readability.js';
import { stripUnread } from './strip-unread.js';

export interface CleanOptions {
  /** Readability gives up on documents with more elements than this (hostile or huge pages). */
  maxElements?: number;
}

/** Elements a page may have before cleaning it is refused as too costly. */
export const DEFAULT_MAX_ELEMENTS = 60_000;

/**
 * Cleans one HTML page: Mozilla's Readability (Firefox's reader view) finds the article over a
 * linkedom DOM (a fast, light DOM: no layout, no scripts); title, author and published time come
 * from Readability's reading of JSON-LD, Open Graph, Dublin Core and meta tags; canonical URL and
 * description from the head (page-metadata.ts); the language from the text (language.ts).
 *
 * A page with no article (a search page, a login form) gives an empty `mainText`, not an error.
 * Throws when the page has more than `maxElements` elements (EXTRACT_FAILED) or the DOM cannot
 * be built; the caller records that as a page it could not clean.
 */
export function cleanHtml(html: string, url: string | null, options: CleanOptions = {}): CleanedPage {
  const stripped = dropLayoutWhitespace(stripUnread(html));
  const maxElements = options.maxElements ?? DEFAULT_MAX_ELEMENTS;
  // Readability's own limit counts getElementsByTagName('*'), which linkedom answers with none;
  // counting start tags in the text is cheaper anyway, and refuses a hostile page before parsing.
  const tags = countStartTags(stripped, maxElements);
  if (tags > maxElements) {
    throw new AppError('EXTRACT_FAILED', `the page has more than ${maxElements} elements`);
  }
  const { document } = parseHTML(stripped);
  const meta = pageMetadata(document, url);
  // Readability is typed against the browser's DOM; linkedom implements the parts it uses.
  const reader = new LeanReadability<unknown>(document as never, {
    maxElemsToParse: maxElements,
    // Only the text is read: removing the class names would be work for nothing.
    keepClasses: true,
    // The article element itself, so its text can be read block by block.
    serializer: (node) => node,
  });
  const article = reader.parse();
  const mainText = article?.content ? blockText(article.content as never) : '';
  const declared = meta.declaredLanguage ?? article?.lang ?? null;
  return {
    title: tidy(article?.title) ?? tidy(document.querySelector('title')?.textContent),
    author: tidy(article?.byline),
    publishedAt: publishedAtOf(article?.publishedTime),
    language: pageLanguage(mainText, declared),
    description: meta.description ?? null,
    canonicalUrl: meta.canonicalUrl,
    mainText,
    extra: {
      siteName: tidy(article?.siteName),
      publishedRaw: tidy(article?.publishedTime),
      declaredLanguage: declared,
      words: mainText ? mainText.split(/\s+/).length : 0,
    },
  };
}

/** How many `<` + letter the text has, counting no further than `limit + 1`. */
function countStartTags(html: string, limit: number): number {
  let count = 0;
  for (let at = html.indexOf('<'); at >= 0 && count <= limit; at = html.indexOf('<', at + 1)) {
    const next = html.charCodeAt(at + 1) | 0x20; // lower-cased ASCII letter
    if (next >= 97 && next <= 122) count += 1;
  }
  return count;
}

function tidy(value: string | null | undefined): string | null {
  const text = value?.replace(/\s+/g, ' ').trim();
  return text ? text : null;
}
