/** What serve.ts and serve-hosts.ts run: a site with stats, answered over IPC, closed on a signal. */
export interface IpcSite {
  stats(): unknown;
  resetStats(): void;
  close(): Promise<void>;
}

/**
 * Answers `{type:'stats'}` and `{type:'reset-stats'}` from the parent with `{type:'stats', stats}`,
 * closes the site and exits 0 on SIGTERM, SIGINT or the parent leaving, then prints `ready` as one
 * JSON line on stdout: the parent reads it to know the site listens.
 */
export function serveOverIpc(site: IpcSite, ready: unknown): void {
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'reset-stats') site.resetStats();
    if (message.type === 'stats' || message.type === 'reset-stats') {
      process.send?.({ type: 'stats', stats: site.stats() });
    }
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void site.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
  process.stdout.write(`${JSON.stringify(ready)}\n`);
}
