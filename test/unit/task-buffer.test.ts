import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskBuffer } from '../../scheduler/dispatch/task-buffer.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import type { Lease } from '../../shared/protocol/task.js';

let seq = 0;
function lease(host: string, path = `/${(seq += 1)}`): Lease {
  return {
    runId: 'default',
    url: `https://${host}${path}`,
    host,
    depth: 0,
    priority: 0,
    parentUrl: null,
    taskId: String(seq),
    leaseId: `l${seq}`,
    attempt: 1,
    lastError: null,
  };
}

/** Takes everything the gate lets through at `now`, starting each request as the dispatcher does. */
function takeAll(buffer: TaskBuffer, gate: HostGate, now: number): string[] {
  const urls: string[] = [];
  for (;;) {
    const { lease: next } = buffer.take(gate, now);
    if (!next) return urls;
    gate.start(next.host, now);
    gate.reportStart(next.host, now);
    urls.push(next.url);
  }
}

const unlimited = (): HostGate => new HostGate({ ...DEFAULT_POLITENESS, concurrency: 1_000, delayMs: 0 });

describe('TaskBuffer', () => {
  test('hosts are served round-robin', () => {
    const buffer = new TaskBuffer(100);
    for (const l of [
      lease('a.test', '/1'),
      lease('a.test', '/2'),
      lease('a.test', '/3'),
      lease('b.test', '/1'),
      lease('b.test', '/2'),
      lease('c.test', '/1'),
    ])
      buffer.add(l);
    assert.equal(buffer.size, 6);
    assert.deepEqual(takeAll(buffer, unlimited(), 0), [
      'https://a.test/1',
      'https://b.test/1',
      'https://c.test/1',
      'https://a.test/2',
      'https://b.test/2',
      'https://a.test/3',
    ]);
    assert.equal(buffer.size, 0);
  });

  test('a host that runs out mid-rotation does not make the next host skip its turn', () => {
    const buffer = new TaskBuffer(100);
    for (const l of [
      lease('a.test', '/1'),
      lease('b.test', '/1'),
      lease('c.test', '/1'),
      lease('a.test', '/2'),
      lease('c.test', '/2'),
    ])
      buffer.add(l);
    assert.deepEqual(takeAll(buffer, unlimited(), 0), [
      'https://a.test/1',
      'https://b.test/1',
      'https://c.test/1',
      'https://a.test/2',
      'https://c.test/2',
    ]);
  });

  test('a host that must wait (delay) never blocks another; wakeInMs says when to look again', () => {
    const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 10, delayMs: 1_000 });
    const buffer = new TaskBuffer(100);
    buffer.add(lease('slow.test', '/1'));
    buffer.add(lease('slow.test', '/2'));
    buffer.add(lease('fast.test', '/1'));

    assert.deepEqual(takeAll(buffer, gate, 0), ['https://slow.test/1', 'https://fast.test/1']);
    // The delay plus the gate's 10% dispatch margin.
    assert.deepEqual(buffer.take(gate, 0), { lease: null, wakeInMs: 1_100 });
    assert.deepEqual(buffer.take(gate, 400), { lease: null, wakeInMs: 700 });
    assert.equal(buffer.take(gate, 1_100).lease?.url, 'https://slow.test/2');
  });

  test('a host at its concurrency cap waits for a finish (Infinity) while other hosts go ahead', () => {
    const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 1, delayMs: 0 });
    const buffer = new TaskBuffer(100);
    buffer.add(lease('busy.test', '/1'));
    buffer.add(lease('busy.test', '/2'));
    buffer.add(lease('other.test', '/1'));
    buffer.add(lease('other.test', '/2'));

    assert.deepEqual(takeAll(buffer, gate, 0), ['https://busy.test/1', 'https://other.test/1']);
    assert.deepEqual(buffer.take(gate, 0), { lease: null, wakeInMs: Infinity });
    // The dispatcher tells the buffer when a request of a host ends (its FlightBook's finish).
    gate.finish('other.test', 1);
    buffer.recheck('other.test');
    assert.equal(buffer.take(gate, 1).lease?.url, 'https://other.test/2');
    gate.finish('busy.test', 2);
    buffer.recheck('busy.test');
    assert.equal(buffer.take(gate, 2).lease?.url, 'https://busy.test/2');
    assert.equal(buffer.size, 0);
  });

  test('wakeInMs is the soonest of the waiting hosts', () => {
    const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 10, delayMs: 0 });
    gate.defer('a.test', 5_000);
    gate.defer('b.test', 300);
    const buffer = new TaskBuffer(100);
    buffer.add(lease('a.test'));
    buffer.add(lease('b.test'));
    assert.deepEqual(buffer.take(gate, 0), { lease: null, wakeInMs: 300 });
    assert.equal(buffer.size, 2, 'nothing taken while every host waits');
  });

  test('an empty buffer yields nothing and asks not to be woken', () => {
    const buffer = new TaskBuffer(10);
    assert.deepEqual(buffer.take(unlimited(), 0), { lease: null, wakeInMs: Infinity });
  });

  test('fullHosts lists the hosts holding perHostLimit tasks, and only while they do', () => {
    const buffer = new TaskBuffer(2);
    buffer.add(lease('a.test'));
    assert.deepEqual(buffer.fullHosts(), []);
    buffer.add(lease('a.test'));
    buffer.add(lease('b.test'));
    assert.deepEqual(buffer.fullHosts(), ['a.test']);
    buffer.add(lease('b.test'));
    assert.deepEqual(buffer.fullHosts().sort(), ['a.test', 'b.test']);
    const gate = unlimited();
    const first = buffer.take(gate, 0).lease;
    assert.equal(first?.host, 'a.test');
    assert.deepEqual(buffer.fullHosts(), ['b.test']);
  });

  test('drain hands back every buffered task and leaves the buffer empty and usable', () => {
    const buffer = new TaskBuffer(10);
    const added = [lease('a.test'), lease('b.test'), lease('a.test')];
    for (const l of added) buffer.add(l);
    assert.equal(buffer.all().length, 3, 'all() only looks');
    assert.equal(buffer.size, 3);

    const drained = buffer.drain();
    assert.deepEqual(drained.map((l) => l.taskId).sort(), added.map((l) => l.taskId).sort());
    assert.equal(buffer.size, 0);
    assert.deepEqual(buffer.all(), []);
    assert.deepEqual(buffer.fullHosts(), []);
    assert.deepEqual(buffer.take(unlimited(), 0), { lease: null, wakeInMs: Infinity });

    const again = lease('c.test');
    buffer.add(again);
    assert.equal(buffer.take(unlimited(), 0).lease, again);
  });
});

describe('TaskBuffer: sleeping hosts', () => {
  /** A gate whose answers the test sets per host, counting how often each host is asked. */
  function scriptedGate(): {
    gate: { waitMs(host: string): number; generation: number };
    waits: Map<string, number>;
    asked: Map<string, number>;
  } {
    const waits = new Map<string, number>();
    const asked = new Map<string, number>();
    const gate = {
      generation: 0,
      waitMs(host: string): number {
        asked.set(host, (asked.get(host) ?? 0) + 1);
        return waits.get(host) ?? 0;
      },
    };
    return { gate, waits, asked };
  }

  test('a host that must wait a known time is not asked again before then', () => {
    const buffer = new TaskBuffer(100);
    const { gate, waits, asked } = scriptedGate();
    buffer.add(lease('delayed.test'));
    waits.set('delayed.test', 150);
    assert.deepEqual(buffer.take(gate, 1_000), { lease: null, wakeInMs: 150 });
    for (const now of [1_010, 1_100, 1_149]) {
      assert.deepEqual(buffer.take(gate, now), { lease: null, wakeInMs: 1_150 - now });
    }
    assert.equal(asked.get('delayed.test'), 1, 'asleep until it is due');
    waits.set('delayed.test', 0);
    assert.equal(buffer.take(gate, 1_150).lease?.host, 'delayed.test');
    assert.equal(asked.get('delayed.test'), 2);
  });

  test('a host waiting for a request to end sleeps until recheck, or a second at most', () => {
    const buffer = new TaskBuffer(100);
    const { gate, waits, asked } = scriptedGate();
    buffer.add(lease('busy.test'));
    buffer.add(lease('busy.test'));
    waits.set('busy.test', Infinity);
    assert.deepEqual(buffer.take(gate, 0), { lease: null, wakeInMs: Infinity });
    waits.set('busy.test', 0); // its request ended
    assert.equal(buffer.take(gate, 10).lease, null, 'asleep: nobody said');
    assert.equal(asked.get('busy.test'), 1);
    buffer.recheck('busy.test');
    assert.equal(buffer.take(gate, 20).lease?.host, 'busy.test');
    waits.set('busy.test', Infinity);
    assert.equal(buffer.take(gate, 30).lease, null);
    waits.set('busy.test', 0); // an end nobody reported: looked at again within a second
    assert.equal(buffer.take(gate, 500).lease, null);
    assert.equal(buffer.take(gate, 1_031).lease?.host, 'busy.test');
  });

  test('recheckAll and a change of the settings wake every sleeping host', () => {
    const buffer = new TaskBuffer(100);
    const { gate, waits } = scriptedGate();
    for (const host of ['a.test', 'b.test', 'a.test', 'b.test']) buffer.add(lease(host));
    waits.set('a.test', 500);
    waits.set('b.test', Infinity);
    assert.equal(buffer.take(gate, 0).lease, null);
    waits.clear();
    buffer.recheckAll();
    assert.deepEqual([buffer.take(gate, 1).lease?.host, buffer.take(gate, 1).lease?.host].sort(), [
      'a.test',
      'b.test',
    ]);
    waits.set('a.test', 500);
    waits.set('b.test', Infinity);
    assert.equal(buffer.take(gate, 2).lease, null);
    waits.clear();
    gate.generation += 1; // the politeness settings changed
    assert.deepEqual([buffer.take(gate, 3).lease?.host, buffer.take(gate, 3).lease?.host].sort(), [
      'a.test',
      'b.test',
    ]);
    assert.equal(buffer.size, 0);
  });

  test('the robots.txt hold is asked only of hosts the gate lets go, every look while it holds', () => {
    const buffer = new TaskBuffer(100);
    const { gate, waits } = scriptedGate();
    const held: string[] = [];
    const hold = { ...gate, waitMs: gate.waitMs, holdMs: (next: Lease) => (held.push(next.host), Infinity) };
    buffer.add(lease('busy.test'));
    buffer.add(lease('unknown-rules.test'));
    waits.set('busy.test', Infinity);
    buffer.take(hold, 0);
    buffer.take(hold, 1);
    assert.deepEqual(held, ['unknown-rules.test', 'unknown-rules.test']);
  });

  test('a real gate: a host is served its delay after its reported start, not sooner', () => {
    const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 2, delayMs: 100 });
    const buffer = new TaskBuffer(100);
    for (let i = 0; i < 3; i++) buffer.add(lease('polite.test'));
    const first = buffer.take(gate, 0).lease as Lease;
    assert.ok(gate.start(first.host, 0));
    assert.deepEqual(
      buffer.take(gate, 1),
      { lease: null, wakeInMs: Infinity },
      'until the start is reported',
    );
    gate.reportStart(first.host, 5);
    buffer.recheck(first.host);
    const waited = buffer.take(gate, 6);
    assert.equal(waited.lease, null);
    const due = 6 + waited.wakeInMs;
    assert.ok(due >= 105, `not before its delay after the start: ${due}`);
    assert.equal(buffer.take(gate, due - 1).lease, null);
    assert.equal(buffer.take(gate, due).lease?.host, 'polite.test');
  });

  test('thousands of hosts, most asleep: a take looks only at those that may be ready', () => {
    const buffer = new TaskBuffer(100);
    const { gate, waits, asked } = scriptedGate();
    for (let h = 0; h < 5_000; h++) {
      buffer.add(lease(`h${h}.test`));
      waits.set(`h${h}.test`, h % 10 < 7 ? Infinity : 150);
    }
    assert.equal(buffer.take(gate, 0).lease, null);
    const first = [...asked.values()].reduce((a, b) => a + b, 0);
    assert.equal(first, 5_000);
    for (let now = 1; now < 100; now++) assert.equal(buffer.take(gate, now).lease, null);
    assert.equal(
      [...asked.values()].reduce((a, b) => a + b, 0),
      first,
      'no host asked again',
    );
  });
});
