/**
 * The metadata Readability does not give: the canonical URL and the page's own description (its
 * `excerpt` falls back to the first paragraph, which is text, not a description). Read from the
 * document before Readability changes it.
 */
export interface PageMetadata {
  canonicalUrl: string | null;
  description: string | null;
  declaredLanguage: string | null;
}

interface QueryableDocument {
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
  documentElement: { getAttribute(name: string): string | null } | null;
}

const DESCRIPTION_SELECTORS = [
  'meta[property="og:description"]',
  'meta[name="description"]',
  'meta[name="twitter:description"]',
  'meta[property="twitter:description"]',
];

export function pageMetadata(doc: QueryableDocument, pageUrl: string | null): PageMetadata {
  return {
    canonicalUrl: canonicalOf(doc, pageUrl),
    description: firstContent(doc, DESCRIPTION_SELECTORS),
    declaredLanguage: doc.documentElement?.getAttribute('lang')?.trim() || null,
  };
}

function firstContent(doc: QueryableDocument, selectors: readonly string[]): string | null {
  for (const selector of selectors) {
    const value = doc.querySelector(selector)?.getAttribute('content')?.replace(/\s+/g, ' ').trim();
    if (value) return value;
  }
  return null;
}

function canonicalOf(doc: QueryableDocument, pageUrl: string | null): string | null {
  const href = doc.querySelector('link[rel~="canonical" i]')?.getAttribute('href')?.trim();
  if (!href) return null;
  try {
    const url = pageUrl ? new URL(href, pageUrl) : new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** A published time as epoch milliseconds, or null when the page's value is not a date. */
export function publishedAtOf(raw: string | null | undefined): number | null {
  if (!raw) return null;
  const at = Date.parse(raw.trim());
  return Number.isFinite(at) ? at : null;
}
