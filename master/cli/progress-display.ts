export interface ProgressFigures {
  done: number;
  failed: number;
  ready: number;
  delayed: number;
  inFlight: number;
  pagesPerSecond: number;
}

/** One self-rewriting status line on a terminal; nothing at all when stderr is not a terminal. */
export class ProgressDisplay {
  private shown = false;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  update(p: ProgressFigures): void {
    if (!this.enabled) return;
    const queued = p.ready + p.delayed;
    const line =
      `ackcrawl: ${p.done} done, ${p.failed} failed, ${queued} queued` +
      `${p.delayed > 0 ? ` (${p.delayed} waiting to retry)` : ''}, ${p.inFlight} in flight, ${p.pagesPerSecond} pages/s`;
    this.stream.write(`\r\x1b[2K${line}`);
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[2K');
    this.shown = false;
  }
}
