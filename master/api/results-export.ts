import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { ResultRepository, ResultRow } from '../../shared/ports/sql-store.js';
import { resultView, type ResultFormat } from './schemas/result.js';

/** Rows read from SQL at a time while a run's results are exported. */
export const EXPORT_PAGE = 500;

/** A run's results, page by page, in the list's order (when written, then capture id). */
export async function* resultPages(
  results: ResultRepository,
  runId: string,
  pageSize = EXPORT_PAGE,
): AsyncGenerator<ResultRow[]> {
  let after: string | null = null;
  do {
    const page = await results.list(runId, { limit: pageSize, after });
    if (page.items.length > 0) yield page.items;
    after = page.next;
  } while (after !== null);
}

/** The CSV's columns, in order: the row's own, then `data` as JSON, then the text when asked for. */
const CSV_COLUMNS = [
  'capture_id',
  'url',
  'status',
  'title',
  'author',
  'published_at',
  'language',
  'description',
  'canonical_url',
  'fetched_at',
  'at',
  'data',
] as const;

function csvRecord(row: ResultRow, withText: boolean): unknown[] {
  const view = resultView(row, withText);
  const record: unknown[] = [
    view.captureId,
    view.url,
    view.status,
    view.title,
    view.author,
    view.publishedAt,
    view.language,
    view.description,
    view.canonicalUrl,
    view.fetchedAt,
    view.at,
    JSON.stringify(view.data ?? null),
  ];
  if (withText) record.push(view.mainText);
  return record;
}

/**
 * A run's results as a file, streamed: JSON Lines (each line what `GET /runs/{id}/results` gives
 * for a result) or CSV (RFC 4180, a header row; a cell a spreadsheet would take for a formula,
 * `=`, `+`, `-`, `@` first, is prefixed with `'`: the text is the web's, not the operator's). Read
 * from SQL a page at a time, as the client takes it: an export of a million results holds one page.
 */
export function exportResults(
  pages: AsyncIterable<ResultRow[]>,
  format: ResultFormat,
  withText: boolean,
): Readable {
  async function* lines(): AsyncGenerator<string> {
    if (format === 'csv') {
      const columns = withText ? [...CSV_COLUMNS, 'main_text'] : [...CSV_COLUMNS];
      yield stringify([columns]);
      for await (const page of pages) {
        yield stringify(
          page.map((row) => csvRecord(row, withText)),
          { escape_formulas: true, cast: { boolean: String } },
        );
      }
      return;
    }
    for await (const page of pages) {
      yield page.map((row) => `${JSON.stringify(resultView(row, withText))}\n`).join('');
    }
  }
  return Readable.from(lines(), { objectMode: false });
}
