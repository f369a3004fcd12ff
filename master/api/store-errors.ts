/** The store rejects a taken id or name with SQL_CONFLICT (shared/ports/sql-store.ts). */
export function isConflict(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'SQL_CONFLICT';
}
