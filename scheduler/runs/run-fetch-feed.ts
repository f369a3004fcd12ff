import type { SchedulerMessage, WireTask } from '../../shared/protocol/messages.js';
import type { HostedRun } from './hosted-run.js';

/** What the feed needs of a crawler's session. */
export interface FeedSession {
  readonly id: string;
  send(message: SchedulerMessage): void;
}

/**
 * Per-run fetch settings reach crawlers with their tasks (protocol 4): before a batch goes to a
 * session, every run it names whose settings that session has not been sent (or has an older
 * version of) gets a `run` message first. Crawlers keep them per connection, so what is sent is
 * remembered per session and forgotten with it.
 */
export class RunFetchFeed {
  private readonly sent = new Map<string, Map<string, number>>();

  constructor(private readonly runOf: (runId: string) => HostedRun | undefined) {}

  beforeTasks(session: FeedSession, tasks: readonly WireTask[]): void {
    let versions = this.sent.get(session.id);
    for (const task of tasks) {
      if (task.runId === undefined) continue;
      const run = this.runOf(task.runId);
      if (!run) continue;
      if (versions?.get(run.runId) === run.fetchVersion) continue;
      if (!versions) this.sent.set(session.id, (versions = new Map()));
      versions.set(run.runId, run.fetchVersion);
      session.send({ type: 'run', runId: run.runId, fetch: run.fetch });
    }
  }

  sessionGone(sessionId: string): void {
    this.sent.delete(sessionId);
  }
}
