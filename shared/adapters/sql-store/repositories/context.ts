import type { Page } from '../../../ports/sql-store.js';
import type { SqlDriver, SqlRow } from '../driver.js';
import type { Statements } from '../statements.js';

/** What every repository gets from the store: the driver, its dialect's statements, the guard. */
export interface StoreContext {
  readonly driver: SqlDriver;
  readonly sql: Statements;
  /** Runs `fn`, turning what the driver throws into SQL_* errors; SQL_CLOSED after close(). */
  guard<T>(op: string, fn: () => Promise<T>): Promise<T>;
}

/** A page from `limit + 1` rows: the extra row only says there is a next page. */
export function toPage<T>(
  rows: SqlRow[],
  limit: number,
  map: (r: SqlRow) => T,
  cursorOf: (item: T) => string,
): Page<T> {
  const items = rows.slice(0, limit).map(map);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
