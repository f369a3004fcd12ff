import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import type { SeenRepository, SqlStore } from '../../shared/ports/sql-store.js';
import type { RabbitFrontier } from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import { shardOfHost, shardsOwnedBy } from '../../shared/adapters/frontier/rabbitmq/shards.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeRabbitFixture, type RabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { waitFor } from '../helpers/wait-for.js';
import { existingQueues } from '../helpers/rabbitmq.js';
import { runQueueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { ref, task } from '../contract/frontier-contract-kit.js';

const SHARDS = 8;
const HEARTBEAT_MS = 150;

/** `perHost` URLs on each of `hosts` hosts. */
function hostTasks(hosts: number, perHost: number, tag = ''): NewTask[] {
  const out: NewTask[] = [];
  for (let h = 0; h < hosts; h++) {
    for (let i = 0; i < perHost; i++) out.push(task(`https://h${h}.test/${tag}${i}`));
  }
  return out;
}

/**
 * A fresh prefix with hosts split in SHARDS, its first frontier scheduler `a`; every scheduler
 * opened on it shares `sharedSeen` when given.
 */
function shardedFixture(sharedSeen?: SeenRepository): Promise<RabbitFixture> {
  return makeRabbitFixture(new FakeClock(), {
    shards: SHARDS,
    memberId: 'a',
    shardHeartbeatMs: HEARTBEAT_MS,
    ...(sharedSeen ? { sharedSeen } : {}),
  });
}

/** The SQL store of a fleet (SQLite here), whose seen-set the schedulers share; closed after `body`. */
async function withSqlStore(body: (store: SqlStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-shared-seen-'));
  const store = await openSqlStore(`sqlite:${join(dir, 'ackcrawl.db')}`);
  try {
    await body(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each scheduler's view of the run once the heartbeats have told it the others' counters. */
async function waitForTotals(
  frontiers: readonly RabbitFrontier[],
  total: number,
  done: number,
): Promise<void> {
  for (const f of frontiers) {
    await waitFor(
      async () => {
        const st = await f.stats('default');
        return st.total === total && st.done === done;
      },
      {
        timeoutMs: 5_000,
        message: async () => `total ${total} and done ${done} (${JSON.stringify(await f.stats('default'))})`,
      },
    );
  }
}

async function openScheduler(fx: RabbitFixture, id: string): Promise<RabbitFrontier> {
  return fx.open({ memberId: id, ledgerPath: join(dirname(fx.ledgerPath), `${id}.db`) });
}

/** Every shard owned by exactly one of `frontiers`. */
async function waitForSplit(frontiers: readonly RabbitFrontier[], what: string): Promise<void> {
  await waitFor(
    () => {
      const owners = new Map<number, number>();
      for (const f of frontiers) for (const s of f.ownedShards) owners.set(s, (owners.get(s) ?? 0) + 1);
      return owners.size === SHARDS && [...owners.values()].every((n) => n === 1);
    },
    {
      timeoutMs: 15_000,
      message: () =>
        `${what}: every shard owned once (${frontiers.map((f) => `[${f.ownedShards.join(',')}]`).join(' ')})`,
    },
  );
}

/** A second scheduler `b` beside the fixture's `a`, both consuming run default, the shards split. */
async function secondScheduler(fx: RabbitFixture): Promise<RabbitFrontier> {
  const b = await openScheduler(fx, 'b');
  for (const f of [fx.frontier, b]) await f.resumeRun('default');
  await waitForSplit([fx.frontier, b], 'two schedulers');
  return b;
}

interface Held {
  host: string;
  by: number;
  from: number;
  to: number;
}

/**
 * Crawler stand-ins: each scheduler leases a few tasks at a time, holds them a moment and acks
 * them. Records every lease (who held which host, when) until stopped.
 */
function workers(initial: readonly RabbitFrontier[]) {
  const done = new Map<string, number>();
  const settledBy = new Map<string, number[]>();
  const held: Held[] = [];
  const stopped = new Set<number>();
  const loops: Promise<void>[] = [];
  let running = true;
  let count = 0;
  const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const loop = async (frontier: RabbitFrontier, by: number): Promise<void> => {
    while (running && !stopped.has(by)) {
      // A closed frontier (the test failed and cleaned up) ends the loop, so the file can exit.
      const got = await frontier
        .lease(4)
        .catch((err: { code?: unknown }) => (err.code === 'FRONTIER_CLOSED' ? null : ([] as Lease[])));
      if (got === null) return;
      if (got.length === 0) {
        await pause(10);
        continue;
      }
      const from = Date.now();
      await pause(15);
      // Killed with these leases out: they ended when it died, unsettled.
      if (!stopped.has(by)) {
        try {
          await frontier.settle({ acks: got.map((l) => ({ lease: ref(l) })), retries: [], failures: [] });
          for (const l of got) {
            done.set(l.url, (done.get(l.url) ?? 0) + 1);
            settledBy.set(l.url, [...(settledBy.get(l.url) ?? []), by]);
          }
        } catch {
          // Its leases are stale (a link went): the broker hands the tasks out again.
        }
      }
      for (const l of got) held.push({ host: l.host, by, from, to: Date.now() });
    }
  };
  const add = (frontier: RabbitFrontier): void => {
    loops.push(loop(frontier, count));
    count += 1;
  };
  initial.forEach(add);
  return {
    done,
    settledBy,
    held,
    add,
    stop: (by: number) => stopped.add(by),
    end: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Waits until the workers have settled `n` distinct URLs. */
async function waitForAllDone(w: ReturnType<typeof workers>, n: number): Promise<void> {
  await waitFor(() => w.done.size === n, {
    timeoutMs: 30_000,
    message: () => `every task done (${w.done.size} of ${n})`,
  });
}

/** After the workers ended: each URL was settled exactly once. */
function assertEachDoneOnce(w: ReturnType<typeof workers>): void {
  assert.deepEqual(
    [...w.done].filter(([, n]) => n !== 1),
    [],
    'no URL fetched twice',
  );
}

/** Pairs of leases of one host held by two schedulers at the same moment. */
function overlaps(held: readonly Held[]): string[] {
  const byHost = new Map<string, Held[]>();
  for (const h of held) byHost.set(h.host, [...(byHost.get(h.host) ?? []), h]);
  const found: string[] = [];
  for (const [host, list] of byHost) {
    for (const a of list) {
      for (const b of list) {
        if (a.by < b.by && a.from < b.to && b.from < a.to) found.push(`${host}: ${a.by} and ${b.by}`);
      }
    }
  }
  return found;
}

describe('rabbitmq frontier: hosts split among schedulers (shards)', () => {
  it('three schedulers own disjoint shards; each host is leased by one of them only; every task once', async () => {
    const fx = await shardedFixture();
    try {
      const b = await openScheduler(fx, 'b');
      const c = await openScheduler(fx, 'c');
      const all = [fx.frontier, b, c];
      for (const f of all) await f.resumeRun('default');
      await waitForSplit(all, 'three schedulers');
      for (const f of all) assert.ok(f.ownedShards.length > 0, 'each of three owns some of 8 shards');

      const pushed = hostTasks(40, 5);
      assert.equal((await fx.frontier.push(pushed)).length, pushed.length);
      const w = workers(all);
      await waitFor(() => w.done.size === pushed.length, {
        timeoutMs: 30_000,
        message: () => `every task done (${w.done.size} of ${pushed.length})`,
      });
      await w.end();
      assert.deepEqual(
        [...w.done.values()].filter((n) => n !== 1),
        [],
        'no task was settled twice',
      );
      // Each host went through the scheduler owning its shard, and no other.
      for (const h of w.held) {
        const owner = all.findIndex((f) => f.ownedShards.includes(shardOfHost(h.host, SHARDS)));
        assert.equal(h.by, owner, `${h.host} leased by its shard's owner`);
      }
      // Finished, as every scheduler sees it (after three heartbeats of quiet), with the run's
      // counters summed over the three ledgers: each URL accepted once and done once.
      for (const f of all) {
        await waitFor(
          async () => {
            const st = await f.stats('default');
            return st.ready + st.delayed + st.leased === 0 && st.done === pushed.length;
          },
          {
            timeoutMs: 5_000,
            message: async () =>
              `each scheduler to see all done: ${JSON.stringify(await f.stats('default'))}`,
          },
        );
        assert.equal((await f.stats('default')).total, pushed.length, 'accepted once, over all ledgers');
      }
    } finally {
      await fx.cleanup();
    }
  });

  it('a scheduler joining moves only its share; one killed gives its shards to the others; nothing lost, no host held by two at once', async () => {
    const fx = await shardedFixture();
    try {
      const b = await secondScheduler(fx);
      const frontiers = [fx.frontier, b];
      const before = frontiers.map((f) => new Set(f.ownedShards));

      const pushed = hostTasks(60, 20);
      await fx.frontier.push(pushed);
      const w = workers(frontiers);
      await waitFor(() => w.done.size >= 200, { timeoutMs: 30_000, message: 'some progress first' });

      // A third scheduler joins: it takes shards only from the others, who only give some up.
      const c = await openScheduler(fx, 'c');
      await c.resumeRun('default');
      w.add(c);
      await waitFor(() => c.ownedShards.length > 0, {
        timeoutMs: 15_000,
        message: 'the new scheduler to take some shards',
      });
      await waitForSplit([fx.frontier, b, c], 'after c joined');
      for (const [i, f] of [fx.frontier, b].entries()) {
        for (const s of f.ownedShards) assert.ok(before[i]?.has(s), `scheduler ${i} gained no shard (${s})`);
      }
      const cShards = new Set(c.ownedShards);
      await waitFor(() => w.held.some((h) => h.by === 2), {
        timeoutMs: 15_000,
        message: 'the new scheduler to lease tasks',
      });

      // kill -9 of the third: its connection goes, its leases are abandoned.
      w.stop(2);
      fx.crash(c);
      await waitForSplit([fx.frontier, b], 'after c was killed');
      for (const s of cShards) {
        assert.ok(
          fx.frontier.ownedShards.includes(s) || b.ownedShards.includes(s),
          `shard ${s} of the killed scheduler has an owner again`,
        );
      }
      await waitFor(() => w.done.size === pushed.length, {
        timeoutMs: 60_000,
        message: () => `every task done (${w.done.size} of ${pushed.length})`,
      });
      await w.end();
      assert.deepEqual(overlaps(w.held), [], 'no host was held by two schedulers at the same moment');
      // The usual bound: only a batch the killed scheduler was acking as it died (its acks went
      // with the connection) is done again, by the new owner.
      const twice = [...w.settledBy].filter(([, by]) => by.length > 1);
      assert.ok(twice.length <= 4, `at most one batch settled twice, not ${twice.length}`);
      for (const [url, by] of twice) assert.deepEqual(by.slice(0, 1), [2], `${url}: first by the killed one`);
    } finally {
      await fx.cleanup();
    }
  });

  it('a scheduler without crawlers owns no shard: the others take its hosts', async () => {
    const fx = await shardedFixture();
    try {
      const b = await secondScheduler(fx);
      await b.setDemand(false);
      await waitFor(() => fx.frontier.ownedShards.length === SHARDS && b.ownedShards.length === 0, {
        timeoutMs: 15_000,
        message: () =>
          `all shards with the scheduler that has crawlers ([${fx.frontier.ownedShards.join(',')}])`,
      });
      const pushed = hostTasks(20, 3);
      await b.push(pushed);
      const w = workers([fx.frontier]);
      await waitFor(() => w.done.size === pushed.length, {
        timeoutMs: 30_000,
        message: () => `every task done by the scheduler with crawlers (${w.done.size})`,
      });
      await w.end();
      assert.equal(b.heldDeliveries, 0, 'the scheduler without crawlers holds nothing');
      await b.setDemand(true);
      await waitFor(() => b.ownedShards.length > 0, {
        timeoutMs: 15_000,
        message: 'b to take its share again once it has crawlers',
      });
      await waitForSplit([fx.frontier, b], 'b has crawlers again');
    } finally {
      await fx.cleanup();
    }
  });

  it('a shard given up stays held while a request to one of its hosts is out besides the leases (robots.txt)', async () => {
    const fx = await shardedFixture();
    try {
      const b = await secondScheduler(fx);
      const shard = b.ownedShards[0] as number;
      let host = '';
      for (let i = 0; host === ''; i++) if (shardOfHost(`r${i}.test`, SHARDS) === shard) host = `r${i}.test`;
      let fetching = true;
      b.countRequestsOut((hosts) => (fetching && hosts(host) ? 1 : 0));
      const others = b.ownedShards.filter((s) => s !== shard);
      await b.setDemand(false);
      // a takes b's other shards at once; b keeps announcing the one whose robots.txt fetch is out.
      await waitFor(() => others.every((s) => fx.frontier.ownedShards.includes(s)), {
        timeoutMs: 15_000,
        message: () => `a took b's other shards ([${fx.frontier.ownedShards.join(',')}])`,
      });
      assert.equal(b.ownedShards.length, 0, 'b consumes nothing');
      assert.equal(b.pacesHost(host), true, 'b still paces the host its fetch is out to');
      assert.equal(fx.frontier.ownedShards.includes(shard), false, 'a has not taken it');
      assert.equal(fx.frontier.pacesHost(host), false);
      fetching = false;
      await waitFor(() => fx.frontier.ownedShards.length === SHARDS, {
        timeoutMs: 15_000,
        message: () => `a took the last shard once the fetch ended ([${fx.frontier.ownedShards.join(',')}])`,
      });
      assert.equal(b.pacesHost(host), false);
      assert.equal(fx.frontier.pacesHost(host), true);
    } finally {
      await fx.cleanup();
    }
  });

  it("a scheduler's share of the shards follows its crawlers' capacity, and nothing is lost while they move", async () => {
    const fx = await shardedFixture();
    try {
      const b = await secondScheduler(fx);
      const expect = (weights: { a: number; b: number }): number[] =>
        shardsOwnedBy(
          'b',
          [
            { id: 'a', weight: weights.a },
            { id: 'b', weight: weights.b },
          ],
          SHARDS,
        );
      const even = expect({ a: 32, b: 32 });
      const heavy = expect({ a: 32, b: 224 });
      assert.ok(heavy.length > even.length, `b gets more shards at 7x: ${even.length} -> ${heavy.length}`);
      fx.frontier.setCapacity(32);
      b.setCapacity(32);
      const pushed = hostTasks(40, 3);
      await fx.frontier.push(pushed);
      const w = workers([fx.frontier, b]);
      // b's crawlers grow to seven times a's: once that has held for three heartbeats, b takes more.
      b.setCapacity(224);
      await waitFor(() => b.ownedShards.join(',') === heavy.join(','), {
        timeoutMs: 15_000,
        message: () => `b to own [${heavy.join(',')}] (owns [${b.ownedShards.join(',')}])`,
      });
      await waitForSplit([fx.frontier, b], 'after b grew');
      await waitForAllDone(w, pushed.length);
      await w.end();
      assertEachDoneOnce(w);
      assert.deepEqual(overlaps(w.held), [], 'no host held by both while the shards moved');
      // A dip that comes back within the settle time moves nothing.
      b.setCapacity(96);
      b.setCapacity(224);
      await new Promise((r) => setTimeout(r, HEARTBEAT_MS * 5));
      assert.deepEqual(b.ownedShards, heavy);
    } finally {
      await fx.cleanup();
    }
  });

  it("a run's cap counts what every scheduler accepted, not each ledger alone", async () => {
    const fx = await shardedFixture();
    try {
      const b = await secondScheduler(fx);
      const cap = { maxTotal: () => 50 };
      assert.equal((await fx.frontier.push(hostTasks(6, 5, 'a'), cap)).length, 30, 'a accepts 30 of the 50');
      // b learns a's count from a's heartbeat.
      await waitFor(async () => (await b.stats('default')).total === 30, {
        timeoutMs: 5_000,
        message: async () => `b to see a's 30 (${JSON.stringify(await b.stats('default'))})`,
      });
      const second = await b.push(hostTasks(8, 5, 'b'), cap);
      assert.equal(second.length, 20, 'b accepts only the room left under the cap');
      await waitFor(async () => (await fx.frontier.stats('default')).total === 50, {
        timeoutMs: 5_000,
        message: async () =>
          `a to see the run at its cap (${JSON.stringify(await fx.frontier.stats('default'))})`,
      });
      assert.equal((await b.push(hostTasks(2, 2, 'c'), cap)).length, 0, 'nothing more once the run is full');
    } finally {
      await fx.cleanup();
    }
  });

  it('a run looks finished only once it has been empty everywhere for three heartbeats', async () => {
    const fx = await shardedFixture();
    try {
      const b = await secondScheduler(fx);
      // One task on a host of b's: a holds nothing of it, yet must not see the run finished.
      let h = 0;
      while (!b.ownedShards.includes(shardOfHost(`h${h}.test`, SHARDS))) h += 1;
      await fx.frontier.push([task(`https://h${h}.test/only`)]);
      let leased: Lease[] = [];
      await waitFor(async () => (leased = await b.lease(1)).length === 1, {
        timeoutMs: 10_000,
        message: 'b to lease the task',
      });
      // While b holds it, a counts it as leased (b says so in its heartbeats).
      await waitFor(async () => (await fx.frontier.stats('default')).leased === 1, {
        timeoutMs: 5_000,
        message: 'a to see the task leased elsewhere',
      });
      await b.settle({ acks: [{ lease: ref(leased[0] as Lease) }], retries: [], failures: [] });
      const settledAt = Date.now();
      await waitFor(
        async () => {
          const s = await fx.frontier.stats('default');
          return s.ready + s.delayed + s.leased === 0;
        },
        { timeoutMs: 10_000, message: 'a to see the run finished' },
      );
      assert.ok(Date.now() - settledAt >= HEARTBEAT_MS * 3 - 50, 'not before three heartbeats of quiet');
    } finally {
      await fx.cleanup();
    }
  });

  it('with the shared seen-set, a scheduler that accepted none of the seeds does not see the run finished', () =>
    withSqlStore(async (store) => {
      const fx = await shardedFixture(store.seen);
      try {
        const b = await secondScheduler(fx);
        // Seeds on b's hosts only, so a holds none of them in its queues.
        let h = 0;
        while (!b.ownedShards.includes(shardOfHost(`h${h}.test`, SHARDS))) h += 1;
        const seeds = [0, 1, 2].map((i) => task(`https://h${h}.test/seed${i}`));
        assert.equal((await b.push(seeds)).length, 3);
        // a starts the same run after b: the fleet has its seeds, so a accepts none of them...
        assert.equal((await fx.frontier.push(seeds)).length, 0);
        // ...and, before b's next heartbeat tells it b's counters, must not see the run over (a
        // scheduler judged such a run finished without a page, and failed it).
        const early = await fx.frontier.stats('default');
        assert.ok(
          early.ready + early.delayed + early.leased > 0,
          `a saw the run finished: ${JSON.stringify(early)}`,
        );
        await waitFor(async () => (await fx.frontier.stats('default')).total === 3, {
          timeoutMs: 5_000,
          message: async () =>
            `a to learn b's 3 seeds (${JSON.stringify(await fx.frontier.stats('default'))})`,
        });
      } finally {
        await fx.cleanup();
      }
    }));

  it('with the shared seen-set, a URL found through two schedulers is published and counted once', () =>
    withSqlStore(async (store) => {
      const fx = await shardedFixture(store.seen);
      try {
        const b = await secondScheduler(fx);
        const first = hostTasks(10, 3, 'x');
        assert.equal((await fx.frontier.push(first)).length, 30);
        // b has not seen them, but the fleet has: only its 4 new URLs go out.
        const again = await b.push([...first, ...hostTasks(2, 2, 'y')]);
        assert.deepEqual(
          again.map((t) => t.url).sort(),
          hostTasks(2, 2, 'y')
            .map((t) => t.url)
            .sort(),
        );
        // Both at once: each publishes, one of them counts each URL.
        const both = hostTasks(6, 5, 'z');
        const [byA, byB] = await Promise.all([fx.frontier.push(both), b.push(both)]);
        assert.equal(byA.length + byB.length, both.length, 'each URL counted by one scheduler');

        const w = workers([fx.frontier, b]);
        const unique = 30 + 4 + 30;
        await waitForAllDone(w, unique);
        await waitForTotals([fx.frontier, b], unique, unique);
        await w.end();
        assertEachDoneOnce(w);
        assert.equal(await store.seen.count(fx.prefix, 'default'), unique);
      } finally {
        await fx.cleanup();
      }
    }));

  it("with the shared store, a killed scheduler's counters outlive the restarts of the others", () =>
    withSqlStore(async (store) => {
      const fx = await shardedFixture(store.seen);
      try {
        const b = await secondScheduler(fx);
        const c = await openScheduler(fx, 'c');
        await c.resumeRun('default');
        await waitForSplit([fx.frontier, b, c], 'three schedulers');
        const pushed = hostTasks(30, 4);
        await fx.frontier.push(pushed);
        const w = workers([fx.frontier, b, c]);
        await waitForAllDone(w, pushed.length);
        await waitForTotals([fx.frontier, b, c], pushed.length, pushed.length);
        await w.end();
        assertEachDoneOnce(w);
        const byC = [...w.settledBy.values()].filter((by) => by.includes(2)).length;
        assert.ok(byC > 0, 'c settled some of the run');
        // c writes its counters at its heartbeats; once the store has them, it is killed.
        await waitFor(
          async () =>
            (await store.seen.listCounts(fx.prefix)).some((r) => r.schedulerId === 'c' && r.done === byC),
          { timeoutMs: 5_000, message: `c's ${byC} pages done in the store` },
        );
        fx.crash(c);
        // Every other scheduler goes too (a restart of the fleet, c not among it), and one with
        // an empty ledger starts: the run's pages are all still in its counters, c's included.
        await fx.frontier.close();
        await b.close();
        const d = await openScheduler(fx, 'd');
        await d.resumeRun('default');
        await waitForTotals([d], pushed.length, pushed.length);
      } finally {
        await fx.cleanup();
      }
    }));

  it("with the shared seen-set, a scheduler that never saw a run's URLs does not publish them again", () =>
    withSqlStore(async (store) => {
      const fx = await shardedFixture(store.seen);
      try {
        const b = await secondScheduler(fx);
        const pushed = hostTasks(12, 4);
        await fx.frontier.push(pushed);
        const w = workers([fx.frontier, b]);
        await waitForAllDone(w, pushed.length);
        // A third scheduler joins with an empty ledger and takes some shards, outcomes and all:
        // it finds the URLs again (a crawler's links) and publishes none of them.
        const c = await openScheduler(fx, 'c');
        await c.resumeRun('default');
        w.add(c);
        await waitForSplit([fx.frontier, b, c], 'after c joined');
        assert.deepEqual(await c.push(pushed), [], 'nothing published again');
        await waitForTotals([fx.frontier, b, c], pushed.length, pushed.length);
        await w.end();
        assertEachDoneOnce(w);
      } finally {
        await fx.cleanup();
      }
    }));
  it('a run two schedulers served: each retires it; its queues go once neither consumes them, with its shared seen rows', () =>
    withSqlStore(async (store) => {
      const fx = await shardedFixture(store.seen);
      try {
        const b = await openScheduler(fx, 'b');
        for (const f of [fx.frontier, b]) await f.resumeRun('r');
        await waitForSplit([fx.frontier, b], 'two schedulers');
        const work = hostTasks(6, 2, 'r').map((t) => ({ ...t, runId: 'r' }));
        assert.equal((await fx.frontier.push(work)).length, work.length);
        let acked = 0;
        await waitFor(
          async () => {
            for (const f of [fx.frontier, b]) {
              const leases = await f.lease(50);
              if (leases.length === 0) continue;
              await f.settle({ acks: leases.map((l) => ({ lease: ref(l) })), retries: [], failures: [] });
              acked += leases.length;
            }
            return acked === work.length;
          },
          { timeoutMs: 15_000, message: () => `every task acked once (${acked} of ${work.length})` },
        );
        const queues = runQueueNames(fx.frontier.queues, 'r');
        assert.equal((await existingQueues(queues)).length, queues.length);

        await fx.frontier.retireRun('r');
        assert.deepEqual(
          (await existingQueues(queues)).length,
          queues.length,
          "kept while b consumes its shards' queues",
        );
        assert.ok(b.connected, "b's link is left alone");
        assert.equal(await store.seen.count(fx.prefix, 'r'), work.length, 'the shared seen rows stay');

        await b.retireRun('r');
        assert.deepEqual(await existingQueues(queues), [], 'deleted by the last to retire it');
        assert.equal(await store.seen.count(fx.prefix, 'r'), 0, 'and so do the shared seen rows');
        // Both go on serving other runs (each hosts a run it is told of).
        for (const f of [fx.frontier, b]) await f.resumeRun('next');
        await fx.frontier.push([task('https://h0.test/next', { runId: 'next' })]);
        await waitFor(async () => (await fx.frontier.lease(1)).length + (await b.lease(1)).length === 1, {
          timeoutMs: 10_000,
          message: 'the next run leased',
        });
      } finally {
        await fx.cleanup();
      }
    }));
});
