import type { Logger } from '../../../logger.js';
import type { Link } from './broker-link.js';
import { jsonObjectOf } from './json-body.js';
import type { ShardMember } from './shards.js';
import type { QueueNames } from './topology.js';

/** A run's counters in one scheduler's ledger: total, done, failed. */
export type RunCounts = [number, number, number];

/** What a scheduler says of itself in each heartbeat. */
export interface Heartbeat {
  v: 1;
  /** Stable per scheduler (its schedulerId): the shards it wins survive its restarts. */
  id: string;
  /** Its exclusive heartbeat queue: the broker deletes it when the scheduler's connection ends. */
  queue: string;
  shards: number;
  /** Shards it consumes, or still has leases out of (it gave them up and waits for them to settle). */
  held: number[];
  /** It has crawlers to feed (Frontier.setDemand): only such schedulers own shards. */
  demand: boolean;
  /**
   * Its weight for a share of the shards: the crawler capacity it serves (CapacityWeight). Absent
   * (a scheduler of an earlier version): then every member weighs the same.
   */
  capacity?: number;
  /** Deliveries it holds (buffered, leased, being settled) per run, for the runs' stats elsewhere. */
  busy: Record<string, number>;
  /** Its ledger's counters per run (see Ledger: the run's counters are the sum over the schedulers). */
  counts: Record<string, RunCounts>;
}

interface Peer extends Heartbeat {
  /** Date.now() when it was last heard. */
  heardAt: number;
}

export interface ShardMembershipOptions {
  id: string;
  names: QueueNames;
  /** How often every scheduler beats; a peer silent for 3 beats is checked with the broker. */
  heartbeatMs: number;
  logger: Logger;
}

/**
 * Who else serves the prefix, as their heartbeats say. Each scheduler beats through the members
 * fanout exchange into every member's exclusive queue. A peer stays a member while it beats; one
 * silent for three beats is asked after with the broker (a passive declare of its queue, on a
 * throwaway channel) and dropped only once its queue is gone, that is once its connection ended
 * and the broker took back every delivery it held: so a peer that is merely slow keeps its shards,
 * and a dead one loses them as soon as the broker knows.
 */
export class ShardMembership {
  private readonly peers = new Map<string, Peer>();
  private queue: string | null = null;
  private joinedAt = Number.POSITIVE_INFINITY;
  private readonly warned = new Set<string>();
  /**
   * Counters of peers that left, as they last said, until they come back (their ledger has them):
   * a run's pages do not drop out of its counters when a scheduler dies.
   */
  private readonly departed = new Map<string, Record<string, RunCounts>>();

  constructor(private readonly options: ShardMembershipOptions) {}

  get id(): string {
    return this.options.id;
  }

  /** On every new link: a fresh exclusive queue, and nothing known of the others until they beat. */
  async attach(link: Link): Promise<void> {
    const { names } = this.options;
    this.peers.clear();
    const { queue } = await link.channel.assertQueue('', {
      exclusive: true,
      autoDelete: true,
      durable: false,
    });
    await link.channel.bindQueue(queue, names.members, '');
    await link.channel.consume(
      queue,
      (message) => {
        if (message !== null) this.hear(message.content);
      },
      { noAck: true },
    );
    this.queue = queue;
    this.joinedAt = Date.now();
  }

  /** The link is gone: so is the queue, and what was heard through it. */
  detach(): void {
    this.queue = null;
    this.peers.clear();
    this.joinedAt = Number.POSITIVE_INFINITY;
  }

  /**
   * True once this member has listened for two beats and a half: every live peer has said what it
   * holds, so taking a shard cannot overlap with the peer that still has it.
   */
  get settled(): boolean {
    return Date.now() - this.joinedAt >= this.options.heartbeatMs * 2.5;
  }

  beat(link: Link, state: Pick<Heartbeat, 'held' | 'demand' | 'capacity' | 'busy' | 'counts'>): void {
    if (!link.alive || this.queue === null) return;
    const beat: Heartbeat = {
      v: 1,
      id: this.options.id,
      queue: this.queue,
      shards: this.options.names.shards,
      ...state,
    };
    try {
      link.channel.publish(
        this.options.names.members,
        '',
        Buffer.from(JSON.stringify(beat)),
        { persistent: false, contentType: 'application/json' },
        () => undefined,
      );
    } catch (err) {
      this.options.logger.debug({ err }, 'could not send a shard heartbeat (the link is going)');
    }
  }

  /**
   * Drops the peers that fell silent and whose heartbeat queue the broker no longer has. True when
   * one went.
   */
  async sweep(link: Link): Promise<boolean> {
    const silentFor = this.options.heartbeatMs * 3;
    let changed = false;
    for (const peer of [...this.peers.values()]) {
      if (Date.now() - peer.heardAt < silentFor || !link.alive) continue;
      if (!(await queueExists(link, peer.queue))) {
        this.peers.delete(peer.id);
        this.departed.set(peer.id, peer.counts);
        this.options.logger.info({ member: peer.id }, 'a scheduler of the prefix is gone: its shards move');
        changed = true;
      }
    }
    return changed;
  }

  /**
   * The members that may own shards: peers that want work and split hosts alike, and this one if
   * it does (`selfWeight`, null when it does not), each with the capacity it announced. When one
   * announces none (an earlier version), all weigh the same, so every member still decides alike.
   */
  candidates(selfWeight: number | null): ShardMember[] {
    const members = [...this.peers.values()]
      .filter((p) => p.demand && p.shards === this.options.names.shards)
      .map((p) => ({ id: p.id, weight: p.capacity }));
    if (selfWeight !== null) members.push({ id: this.options.id, weight: selfWeight });
    const weighed = members.every((m) => m.weight !== undefined);
    return members.map((m) => ({ id: m.id, weight: weighed ? (m.weight as number) : 1 }));
  }

  /** Another member says it holds the shard (consumes it, or has leases of it out). */
  heldByOther(shard: number): boolean {
    for (const peer of this.peers.values()) {
      // A peer with another shard count consumes other queues: its shard numbers are not ours.
      if (peer.shards === this.options.names.shards && peer.held.includes(shard)) return true;
    }
    return false;
  }

  /** Deliveries of the run the peers hold, as they last said. */
  busyElsewhere(runId: string): number {
    let n = 0;
    for (const peer of this.peers.values()) n += peer.busy[runId] ?? 0;
    return n;
  }

  /** The run's counters in the other schedulers' ledgers (those gone included, as they last said). */
  countsElsewhere(runId: string): RunCounts {
    const sum: RunCounts = [0, 0, 0];
    const add = (counts: Record<string, RunCounts>): void => {
      const c = counts[runId];
      if (c === undefined) return;
      sum[0] += c[0];
      sum[1] += c[1];
      sum[2] += c[2];
    };
    for (const peer of this.peers.values()) add(peer.counts);
    for (const [id, counts] of this.departed) if (!this.peers.has(id)) add(counts);
    return sum;
  }

  /**
   * Counters of schedulers as the shared store last had them (SharedSeen.othersCounts): those
   * that are not members now are taken as departed, so a run's counters keep the pages of a
   * scheduler that died before this one started, or while it was restarting.
   */
  rememberDeparted(others: ReadonlyMap<string, Record<string, RunCounts>>): void {
    for (const [id, counts] of others) {
      if (id !== this.options.id && !this.peers.has(id)) this.departed.set(id, counts);
    }
  }

  /** How many peers are members now. */
  get peerCount(): number {
    return this.peers.size;
  }

  private hear(content: Buffer): void {
    const beat = parseHeartbeat(content);
    if (beat === null) {
      this.options.logger.debug({ bytes: content.length }, 'ignoring a malformed shard heartbeat');
      return;
    }
    if (beat.queue === this.queue) return;
    if (beat.id === this.options.id) {
      this.warnOnce(
        `id:${beat.queue}`,
        { member: beat.id },
        'another scheduler of the prefix has this scheduler id: give each its own ACKCRAWL_SCHEDULER_ID (or data dir), or they will both take the same hosts',
      );
      return;
    }
    if (beat.shards !== this.options.names.shards) {
      this.warnOnce(
        `shards:${beat.id}`,
        { member: beat.id, theirs: beat.shards, ours: this.options.names.shards },
        'a scheduler of the prefix splits hosts into another number of shards: they share no work; give every scheduler of a prefix the same ACKCRAWL_SHARDS',
      );
    }
    const known = this.peers.get(beat.id);
    if (known === undefined) {
      this.options.logger.info({ member: beat.id }, 'a scheduler joined the prefix');
    }
    this.peers.set(beat.id, { ...beat, heardAt: Date.now() });
    this.departed.delete(beat.id);
  }

  private warnOnce(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.logger.error(fields, message);
  }
}

/** The heartbeat, or null when the body is not one (a heartbeat from a hostile or newer peer). */
export function parseHeartbeat(content: Buffer): Heartbeat | null {
  const value = jsonObjectOf(content);
  if (value === null) return null;
  const b = value as Partial<Heartbeat>;
  if (b.v !== 1 || typeof b.id !== 'string' || b.id === '' || typeof b.queue !== 'string') return null;
  if (!Number.isInteger(b.shards) || !Array.isArray(b.held) || typeof b.demand !== 'boolean') return null;
  if (!b.held.every((s) => Number.isInteger(s) && s >= 0)) return null;
  const busy: Record<string, number> = {};
  if (typeof b.busy === 'object' && b.busy !== null) {
    for (const [runId, n] of Object.entries(b.busy)) {
      if (Number.isInteger(n) && n > 0) busy[runId] = n;
    }
  }
  const counts: Record<string, RunCounts> = {};
  if (typeof b.counts === 'object' && b.counts !== null) {
    for (const [runId, c] of Object.entries(b.counts)) {
      if (Array.isArray(c) && c.length === 3 && c.every((n) => Number.isInteger(n) && n >= 0)) {
        counts[runId] = [c[0], c[1], c[2]] as RunCounts;
      }
    }
  }
  const capacity =
    typeof b.capacity === 'number' && Number.isFinite(b.capacity) && b.capacity > 0 ? b.capacity : undefined;
  return {
    v: 1,
    id: b.id,
    queue: b.queue,
    shards: b.shards as number,
    held: b.held,
    demand: b.demand,
    ...(capacity === undefined ? {} : { capacity }),
    busy,
    counts,
  };
}

/** Whether the broker has the queue, asked on a throwaway channel (a missing queue closes it). */
async function queueExists(link: Link, queue: string): Promise<boolean> {
  let channel;
  try {
    channel = await link.model.createChannel();
  } catch {
    return true; // Cannot tell: keep the peer; the next sweep asks again.
  }
  channel.on('error', () => undefined);
  try {
    await channel.checkQueue(queue);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code !== 404;
  } finally {
    await channel.close().catch(() => undefined);
  }
}
