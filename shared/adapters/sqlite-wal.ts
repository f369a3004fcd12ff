const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Puts a SQLite connection in WAL mode, waiting out a neighbour doing the same.
 *
 * Switching a file to WAL needs its exclusive lock. When two processes open one new file at the
 * same moment, each holds a shared lock and wants the other's gone: SQLite answers SQLITE_BUSY at
 * once rather than call the busy handler (waiting could deadlock), so busy_timeout does not help.
 * The loser retries here, with a short growing pause, until `waitMs` is spent; by then the winner
 * has switched the file, and the retry finds it in WAL already. The pause blocks the thread, as
 * SQLite's own busy wait does: it only happens while a store opens.
 */
export function enterWalMode(db: { pragma(source: string): unknown }, waitMs: number): void {
  const deadline = Date.now() + waitMs;
  for (let ms = 1; ; ms = Math.min(ms * 2, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() + ms > deadline) throw err;
      Atomics.wait(pause, 0, 0, ms);
    }
  }
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_BUSY/.test(code);
}
