import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPeriodicPass } from '../../shared/lifecycle/periodic-pass.js';
import { waitFor } from '../helpers/wait-for.js';

test('passes never overlap, runOnce joins the one in flight, a failure goes to onError', async () => {
  let inFlight = 0;
  let most = 0;
  let passes = 0;
  const errors: unknown[] = [];
  let release: (() => void) | null = null;
  const loop = startPeriodicPass(
    async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      passes += 1;
      try {
        if (passes === 2) throw new Error('pass 2 failed');
        await new Promise<void>((resolve) => (release = resolve));
        return passes;
      } finally {
        inFlight -= 1;
      }
    },
    { intervalMs: 5, onError: (err) => errors.push(err) },
  );
  const first = loop.runOnce();
  assert.equal(loop.runOnce(), first, 'joined');
  await new Promise((resolve) => setTimeout(resolve, 30)); // ticks while the pass is held
  assert.equal(passes, 1, 'no tick started a second pass');
  (release as unknown as () => void)();
  assert.equal(await first, 1);
  await waitFor(() => errors.length === 1, { timeoutMs: 5_000, message: 'the failed timed pass reported' });
  assert.match(String(errors[0]), /pass 2 failed/);
  await waitFor(() => passes >= 3, { timeoutMs: 5_000, message: 'the next tick tried again' });
  assert.equal(loop.closed, false);
  const closing = loop.close();
  assert.equal(loop.closed, true);
  (release as unknown as () => void)();
  await closing;
  const after = passes;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(passes, after, 'nothing runs after close()');
  assert.equal(most, 1);
});
