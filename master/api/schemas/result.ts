import { z } from 'zod';
import type { ResultRow } from '../../../shared/ports/sql-store.js';
import { isoTime, toIso, toIsoOrNull } from './common.js';

/** What `ackcrawl extract` made of one capture of a page of the run (docs/extract.md). */
export const resultSchema = z.object({
  captureId: z.string().describe("The fetch it was made from (the page record's captureId)."),
  url: z.string(),
  status: z.number().int().nullable().describe("The page's HTTP status."),
  title: z.string().nullable(),
  author: z.string().nullable(),
  publishedAt: isoTime.nullable().describe('When the page says it was published.'),
  language: z.string().nullable().describe('ISO 639-1, detected from the text, else the page’s own.'),
  description: z.string().nullable(),
  canonicalUrl: z.string().nullable(),
  fetchedAt: isoTime.nullable(),
  at: isoTime.describe('When the row was written (a later extraction rewrites it).'),
  data: z.unknown().describe('Further facts: siteName, words, finalUrl, declaredLanguage, publishedRaw.'),
  mainText: z
    .string()
    .nullable()
    .optional()
    .describe("The article's text; only with ?text=true (null for rows written before it was kept)."),
});
export type ResultView = z.input<typeof resultSchema>;

export const resultsQuery = z.strictObject({
  text: z.enum(['true', 'false']).optional().describe("true: each result with its article's text."),
});

export const RESULT_FORMATS = ['jsonl', 'csv'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

export const exportQuery = z.strictObject({
  format: z
    .enum(RESULT_FORMATS)
    .optional()
    .describe(
      'jsonl (default): one result a line, as the list gives them; csv: one row each, a header first.',
    ),
  text: z
    .enum(['true', 'false'])
    .optional()
    .describe("false: without the article's text (default: with it)."),
});

/** A result row as the API answers it; its text only when asked for. */
export function resultView(row: ResultRow, withText: boolean): ResultView {
  return {
    captureId: row.captureId,
    url: row.url,
    status: row.status,
    title: row.title,
    author: row.author,
    publishedAt: toIsoOrNull(row.publishedAt),
    language: row.language,
    description: row.description,
    canonicalUrl: row.canonicalUrl,
    fetchedAt: toIsoOrNull(row.fetchedAt),
    at: toIso(row.at),
    data: row.data,
    ...(withText ? { mainText: row.mainText } : {}),
  };
}
