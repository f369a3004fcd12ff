import type { Logger } from '../../../logger.js';
import type { RunLimit, Settlement, SettleResult } from '../../../ports/frontier.js';
import type { NewTask } from '../../../protocol/task.js';
import { runCap } from '../task-input.js';
import { ackOn, type Link } from './broker-link.js';
import { LedgerState, type Ledger } from './ledger.js';
import type { Delivery, Held, LeaseBook } from './lease-book.js';
import type { OutgoingMessages } from './outgoing-messages.js';
import type { Outgoing, Publisher } from './publisher.js';
import type { SharedSeen } from './shared-seen.js';

/** The live leases a settlement names, taken out of the lease book; stale ones are left out. */
export interface ClaimedSettlement {
  acks: { held: Held; discovered: readonly NewTask[] }[];
  retries: { held: Held; delayMs: number; error: string }[];
  failures: { held: Held; error: string; discovered: readonly NewTask[] }[];
  all: Held[];
}

/** Claimed at once, so neither expiry nor release can hand them back while the settle publishes. */
export function claimSettlement(book: LeaseBook, batch: Settlement): ClaimedSettlement {
  const claimed: ClaimedSettlement = { acks: [], retries: [], failures: [], all: [] };
  for (const { lease, discovered } of batch.acks) {
    const held = book.claim(lease);
    if (held) claimed.acks.push({ held, discovered: discovered ?? [] });
  }
  for (const { lease, delayMs, error } of batch.retries) {
    const held = book.claim(lease);
    if (held) claimed.retries.push({ held, delayMs, error });
  }
  for (const { lease, error, discovered } of batch.failures) {
    const held = book.claim(lease);
    if (held) claimed.failures.push({ held, error, discovered: discovered ?? [] });
  }
  claimed.all = [...claimed.acks, ...claimed.retries, ...claimed.failures].map((x) => x.held);
  return claimed;
}

export interface FrontierWriterDeps {
  ledger: Ledger;
  book: LeaseBook;
  publisher: Publisher;
  outgoing: OutgoingMessages;
  clock: () => number;
  logger: Logger;
  /** Declares a run's queues on the link if this link has not yet (see RabbitFrontier). */
  ensureRunQueues: (link: Link, runId: string) => Promise<void>;
  /** This process changed what the queues hold. */
  onQueuesChanged: () => void;
  /**
   * URLs of the run the other schedulers of the prefix accepted, as they last said (hosts split
   * among schedulers): they count against the run's cap too. Absent: this ledger is the only one.
   */
  acceptedElsewhere?: (runId: string) => number;
  /**
   * The seen-set shared by the schedulers of the prefix (hosts split among them): a URL another
   * one accepted is not published again, and a URL two publish at once is counted by one.
   */
  sharedSeen?: SharedSeen;
}

/** New tasks after the shared seen-set: those to publish, and those another scheduler has. */
interface Sorted {
  fresh: NewTask[];
  elsewhere: NewTask[];
}

/** What the ledger records of a batch's new tasks. */
interface Accepted {
  accepted: NewTask[];
  seenElsewhere: NewTask[];
}

/**
 * The write path, in the order that never loses a URL: publish (every message confirmed), then
 * record in the ledger, then ack. A crash or a lost link between two steps leaves a duplicate
 * message at worst; the ledger lets the intake drop it on delivery when its outcome is known.
 */
export class FrontierWriter {
  constructor(private readonly deps: FrontierWriterDeps) {}

  async push(link: Link, tasks: readonly NewTask[], maxTotal: RunLimit | undefined): Promise<NewTask[]> {
    const sorted = await this.sortShared(this.deps.ledger.unseen(tasks, this.room(maxTotal)).fresh);
    await this.prepareRuns(link, sorted.fresh);
    await this.publishWithNew(link, sorted.fresh, [], 'push');
    const accepted = await this.claimShared(sorted);
    this.deps.ledger.record(accepted);
    return accepted.accepted;
  }

  /**
   * A failed URL back into its run as a fresh task: published (confirmed), then the ledger moves
   * it from failed to accepted. A crash in between leaves a message the intake drops (the ledger
   * still says failed); the caller's durable mark (the master's retry in SQL) asks again.
   */
  async requeue(link: Link, task: NewTask): Promise<boolean> {
    const entry = this.deps.ledger.lookup(task.runId, task.url);
    if (entry?.state !== LedgerState.failed) return false;
    await this.prepareRuns(link, [task]);
    await this.publishWithNew(link, [], [this.deps.outgoing.fresh(task)], 'requeue');
    this.deps.ledger.record({ requeued: [{ runId: task.runId, url: task.url }] });
    return true;
  }

  async settle(link: Link, claimed: ClaimedSettlement, batch: Settlement): Promise<SettleResult> {
    const { ledger, outgoing } = this.deps;
    const { acks, retries, failures } = claimed;
    const now = this.deps.clock();
    // A stale ack pushes nothing: the lease that replaced it reports its own links.
    // Discoveries of a cancelled run are left out by unseen(); its retries are dropped.
    const local = ledger.unseen(
      [...acks, ...failures].flatMap((a) => a.discovered),
      this.room(batch.maxTotal),
    );
    const sorted = await this.sortShared(local.fresh);
    const { fresh } = sorted;
    const live = retries.filter((r) => ledger.stateOf(r.held.task.runId) !== 'cancelled');
    await this.prepareRuns(link, fresh);
    await this.publishWithNew(
      link,
      fresh,
      [
        ...live.map((r) => outgoing.retry(r.held.task, r.delayMs, r.error, now)),
        ...failures.map((f) => outgoing.dead(f.held.task, f.error, now)),
      ],
      'settle',
    );
    const accepted = await this.claimShared(sorted);
    ledger.record({
      ...accepted,
      done: acks.map((a) => runUrl(a.held)),
      failed: failures.map((f) => runUrl(f.held)),
      retried: live.map((r) => ({ ...runUrl(r.held), attempt: r.held.task.attempt + 1 })),
      ...(batch.checkpoint === undefined ? {} : { checkpoint: batch.checkpoint }),
    });
    // Acks go last. If the link died since the confirms they are not sent: the broker puts the
    // messages back, and the intake drops them because the ledger now has their outcome.
    for (const held of claimed.all) {
      ackOn(held.link, held.message);
      this.deps.book.finish(held);
    }
    const result = { applied: claimed.all.length, accepted: accepted.accepted.length };
    return local.capped ? { ...result, capped: local.capped } : result;
  }

  /**
   * Sets deliveries aside: publishes each as a delayed copy (confirmed), then acks the original.
   * A crash or a lost link in between leaves both copies, never none; the ledger is not touched,
   * since nothing about the URL changed.
   */
  async park(link: Link, items: readonly { delivery: Delivery; delayMs: number }[]): Promise<void> {
    const now = this.deps.clock();
    try {
      await this.deps.publisher.publish(
        link,
        items.map((i) => this.deps.outgoing.park(i.delivery.task, i.delayMs, now)),
        'park',
        () => undefined,
      );
    } finally {
      this.deps.onQueuesChanged();
    }
    for (const { delivery } of items) {
      ackOn(delivery.link, delivery.message);
      this.deps.book.finishParking(delivery);
    }
  }

  /**
   * Publishes the new tasks and `more`. If the batch fails half way, the new tasks the broker did
   * confirm are in its queue and will be crawled, so they go into the ledger now; otherwise the
   * retried call would publish them again.
   */
  private async publishWithNew(
    link: Link,
    fresh: readonly NewTask[],
    more: readonly Outgoing[],
    op: string,
  ): Promise<void> {
    const confirmed: NewTask[] = [];
    const out = [...fresh.map((task) => this.deps.outgoing.fresh(task)), ...more];
    try {
      await this.deps.publisher.publish(link, out, op, (i) => {
        if (i < fresh.length) confirmed.push(fresh[i] as NewTask);
      });
    } catch (err) {
      if (confirmed.length > 0) await this.keep(confirmed);
      throw err;
    } finally {
      if (out.length > 0) this.deps.onQueuesChanged();
    }
  }

  /** Without a shared seen-set every new task is fresh. */
  private async sortShared(tasks: NewTask[]): Promise<Sorted> {
    const shared = this.deps.sharedSeen;
    if (shared === undefined || tasks.length === 0) return { fresh: tasks, elsewhere: [] };
    const { unseen, seen } = await shared.sort(tasks);
    return { fresh: unseen, elsewhere: seen };
  }

  /**
   * After the confirms: the published tasks this scheduler won in the shared seen-set count as
   * accepted here; those another one claimed in between (both published them) and those it had
   * already go into the ledger uncounted, since that one counts them.
   */
  private async claimShared(sorted: Sorted): Promise<Accepted> {
    const shared = this.deps.sharedSeen;
    if (shared === undefined || sorted.fresh.length === 0) {
      return { accepted: sorted.fresh, seenElsewhere: sorted.elsewhere };
    }
    const { won, lost } = await shared.claim(sorted.fresh);
    return { accepted: won, seenElsewhere: [...sorted.elsewhere, ...lost] };
  }

  /**
   * Confirmed tasks of a batch that failed half way: claimed in the shared seen-set like a whole
   * batch's (so another scheduler that finds them does not publish them again), then recorded.
   */
  private async keep(confirmed: NewTask[]): Promise<void> {
    try {
      this.deps.ledger.record(await this.claimShared({ fresh: confirmed, elsewhere: [] }));
    } catch (err) {
      this.deps.logger.warn(
        { err, tasks: confirmed.length },
        'could not record confirmed tasks; they may be sent twice',
      );
    }
  }

  /**
   * Each run's room under its maxTotal: the cap less what this ledger and, with shards, the other
   * schedulers accepted. Theirs is as of their last heartbeat, so the run may go over its cap by
   * what they accepted since (a heartbeat's worth), never by a scheduler's whole share.
   */
  private room(maxTotal: RunLimit | undefined): (runId: string) => number {
    // Asked for each new URL of a batch; nothing it reads changes before the batch is recorded.
    const rooms = new Map<string, number>();
    return (runId) => {
      let room = rooms.get(runId);
      if (room === undefined) {
        const cap = runCap(maxTotal, runId);
        const elsewhere = cap === undefined ? 0 : (this.deps.acceptedElsewhere?.(runId) ?? 0);
        room =
          cap === undefined ? Infinity : Math.max(0, cap - this.deps.ledger.counts(runId).total - elsewhere);
        rooms.set(runId, room);
      }
      return room;
    };
  }

  /** Runs go into the ledger before their first message, and their queues exist before it is sent. */
  private async prepareRuns(link: Link, fresh: readonly NewTask[]): Promise<void> {
    if (fresh.length === 0) return;
    const runIds = new Set(fresh.map((task) => task.runId));
    this.deps.ledger.ensureRuns(runIds);
    for (const runId of runIds) await this.deps.ensureRunQueues(link, runId);
  }
}

function runUrl(held: Held): { runId: string; url: string } {
  return { runId: held.task.runId, url: held.task.url };
}
