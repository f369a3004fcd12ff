import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunCommand, RunControl } from '../../shared/ports/run-control.js';
import { waitFor } from '../helpers/wait-for.js';

export interface RunControlFixture {
  /** A publisher or subscriber on the same channel of commands (one per scheduler, say). */
  open(): Promise<RunControl>;
  cleanup(): Promise<void>;
}

const start: RunCommand = {
  type: 'start',
  runId: 'r1',
  jobId: 'j1',
  settings: { seeds: ['https://a.test/'] },
};

/** What every run-control adapter does: fan out to every subscriber, stop at close. */
export function runControlContract(name: string, makeFixture: () => Promise<RunControlFixture>): void {
  describe(`run control contract: ${name}`, () => {
    const withFixture = async (body: (fixture: RunControlFixture) => Promise<void>): Promise<void> => {
      const fixture = await makeFixture();
      try {
        await body(fixture);
      } finally {
        await fixture.cleanup();
      }
    };

    it('delivers every command to every subscriber, in order per publisher', () =>
      withFixture(async (fixture) => {
        const publisher = await fixture.open();
        const a: RunCommand[] = [];
        const b: RunCommand[] = [];
        await (await fixture.open()).subscribe((c) => void a.push(c));
        await (await fixture.open()).subscribe((c) => void b.push(c));
        const sent: RunCommand[] = [
          start,
          { type: 'pause', runId: 'r1' },
          { type: 'resume', runId: 'r1' },
          { type: 'settings', runId: 'r1', settings: { hostDelayMs: 10 } },
          { type: 'cancel', runId: 'r1' },
        ];
        for (const command of sent) await publisher.publish(command);
        await waitFor(() => a.length === sent.length && b.length === sent.length, {
          message: 'both subscribers to get every command',
        });
        assert.deepEqual(a, sent);
        assert.deepEqual(b, sent);
      }));

    it('a closed subscription gets nothing more; the others go on', () =>
      withFixture(async (fixture) => {
        const publisher = await fixture.open();
        const kept: RunCommand[] = [];
        const dropped: RunCommand[] = [];
        const control = await fixture.open();
        await control.subscribe((c) => void kept.push(c));
        const gone = await control.subscribe((c) => void dropped.push(c));
        await publisher.publish({ type: 'pause', runId: 'r1' });
        await waitFor(() => kept.length === 1 && dropped.length === 1, { message: 'the first command' });
        await gone.close();
        await gone.close();
        await publisher.publish({ type: 'resume', runId: 'r1' });
        await publisher.publish({ type: 'cancel', runId: 'r1' });
        await waitFor(() => kept.length === 3, { message: 'the kept subscriber to get the rest' });
        assert.equal(dropped.length, 1);
      }));

    it('a handler that throws does not stop later commands', () =>
      withFixture(async (fixture) => {
        const publisher = await fixture.open();
        const seen: string[] = [];
        await (
          await fixture.open()
        ).subscribe((c) => {
          seen.push(c.type);
          if (c.type === 'pause') throw new Error('handler bug');
        });
        await publisher.publish({ type: 'pause', runId: 'r1' });
        await publisher.publish({ type: 'cancel', runId: 'r1' });
        await waitFor(() => seen.length === 2, { message: 'the command after the throw' });
        assert.deepEqual(seen, ['pause', 'cancel']);
      }));

    it('after close(), publish and subscribe fail RUN_CONTROL_CLOSED; close twice is fine', () =>
      withFixture(async (fixture) => {
        const control = await fixture.open();
        await control.close();
        await control.close();
        await assert.rejects(control.publish(start), { code: 'RUN_CONTROL_CLOSED' });
        await assert.rejects(
          control.subscribe(() => undefined),
          { code: 'RUN_CONTROL_CLOSED' },
        );
      }));
  });
}
