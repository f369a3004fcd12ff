/**
 * What cleaning one page produces: the columns of a results row (shared/ports/sql-store.ts) that
 * come from the page itself. Every field but `mainText` may be null when the page does not say.
 */
export interface CleanedPage {
  title: string | null;
  author: string | null;
  /** Milliseconds since the epoch, from the page's metadata; null when absent or unparseable. */
  publishedAt: number | null;
  /** ISO 639-1 code (`en`, `de`, `zh`), detected from the main text, else the page's `lang`. */
  language: string | null;
  description: string | null;
  /** The page's `<link rel=canonical>`, absolute; null when absent or not http(s). */
  canonicalUrl: string | null;
  /** The article's text, paragraphs separated by blank lines; empty when no article was found. */
  mainText: string;
  /** Extra facts kept in the row's `data` JSON. */
  extra: {
    siteName: string | null;
    /** The published time as the page wrote it. */
    publishedRaw: string | null;
    /** The language the page declared (`<html lang>`), as written. */
    declaredLanguage: string | null;
    words: number;
  };
}
