import { it } from 'node:test';
import assert from 'node:assert/strict';
import { stallOf } from '../../scheduler/outcomes/stall-reason.js';

it("a stall's reason: the broker's block first, then the catalogued meaning of the last failure", () => {
  assert.equal(stallOf(null, true), undefined, 'no stall: nothing to say, blocked or not');
  assert.match(stallOf({ since: 5, code: null }, true)?.reason ?? '', /^RabbitMQ blocks publishing/);
  const full = stallOf({ since: 5, code: 'FRONTIER_DISK_FULL' }, false);
  assert.deepEqual(full, {
    since: 5,
    reason:
      "outcomes cannot be made durable: FRONTIER_DISK_FULL (the frontier's disk is full; the crawl waits for space (the message names the path))",
  });
  assert.match(
    stallOf({ since: 5, code: 'NOT_A_CODE' }, false)?.reason ?? '',
    /NOT_A_CODE \(see the scheduler log\)/,
  );
  assert.match(
    stallOf({ since: 5, code: null }, false)?.reason ?? '',
    /wait for the page sink or the frontier/,
  );
});
