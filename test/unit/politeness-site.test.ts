import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import {
  closestStarts,
  smallestStartGap,
  stallNote,
  startPolitenessSite,
  type RequestSpan,
} from '../fixtures/politeness-site.js';
import { StallWatch } from '../fixtures/stall-watch.js';

/** The nice value of each thread of this process (field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test('the politeness site stamps requests on a thread of its own at nice -20 when allowed, and only that thread', async (t) => {
  const site = await startPolitenessSite([{ name: 'a', pages: 1, responseMs: 1 }]);
  t.after(() => site.close());
  const root = process.getuid?.() === 0;
  if (root) {
    assert.equal(site.stampPriority, -20);
    // One thread of the process went first: the site's. The test's own thread is untouched.
    assert.deepEqual(
      threadNiceValues().filter((nice) => nice !== 0),
      [-20],
    );
  } else {
    assert.equal(site.stampPriority, null, 'a process without CAP_SYS_NICE says it could not');
  }
  const host = [...site.hosts.values()][0];
  assert.ok(host);
  const before = Date.now();
  const response = await fetch(`${host.url}p/0`);
  assert.equal(response.status, 200);
  await response.text();
  await site.settle();
  assert.equal(host.spans.length, 1);
  const span = host.spans[0];
  assert.ok(span && span.start >= before, 'the request is stamped when it arrived');
  assert.ok(span.earliest <= span.start && span.earliest >= before - 100, JSON.stringify(span));
});

test('StallWatch: an event handled after the thread stood still dates from before the stall, for the rest of that turn', () => {
  let now = 1_000;
  const afterPoll: (() => void)[] = [];
  const watch = new StallWatch(
    8,
    () => now,
    (fn) => afterPoll.push(fn),
  );
  now = 1_002;
  assert.deepEqual(watch.alive(), { now: 1_002, since: 1_002 }, 'on time: the event is as stamped');
  now = 1_009;
  assert.deepEqual(watch.alive(), { now: 1_009, since: 1_009 }, '7 ms of silence is no stall');
  now = 1_070;
  assert.deepEqual(watch.alive(), { now: 1_070, since: 1_009 }, '61 ms of silence: it may date from 1,009');
  now = 1_071;
  assert.deepEqual(watch.alive(), { now: 1_071, since: 1_009 }, 'the same turn shares the stall');
  assert.equal(afterPoll.length, 1);
  afterPoll.shift()?.();
  now = 1_073;
  assert.deepEqual(watch.alive(), { now: 1_073, since: 1_073 }, 'the next turn is on time again');
});

test('start gaps count from the earliest the first request may have arrived', () => {
  const span = (path: string, start: number, earliest = start): RequestSpan => ({
    path,
    start,
    earliest,
    end: start + 20,
    status: 200,
  });
  // /b was stamped 40 ms late (the thread stood still from 1,070): /c, 76 ms after /b's stamp,
  // may have come 116 ms after /b. /a to /b is then the closest pair, at 110 ms.
  const spans = [span('/c', 1_186), span('/a', 1_000), span('/b', 1_110, 1_070)];
  assert.equal(smallestStartGap(spans), 110);
  assert.deepEqual(
    closestStarts(spans)?.map((s) => s.path),
    ['/a', '/b'],
  );
  assert.equal(stallNote(closestStarts(spans)), '', 'no stall before /a');
  const stalled = [span('/a', 1_000), span('/b', 1_140, 1_100), span('/c', 1_216)];
  assert.equal(smallestStartGap(stalled), 116);
  assert.match(
    stallNote(closestStarts(stalled)),
    /stamped 76 ms apart, the site's thread having stood still 40 ms before \/b/,
  );
  assert.equal(smallestStartGap([span('/a', 1_000)]), Infinity);
});
