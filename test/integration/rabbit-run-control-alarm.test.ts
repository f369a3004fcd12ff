import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openRabbitRunControl } from '../../shared/adapters/run-control/rabbit-run-control.js';
import { silentLogger } from '../../shared/logger.js';
import type { RunCommand } from '../../shared/ports/run-control.js';
import { memoryLogger } from '../helpers/log-lines.js';
import { AMQP_URL, rabbitAdmin } from '../helpers/rabbitmq.js';
import { rabbitDiskAlarm } from '../helpers/service-control.js';
import { waitFor } from '../helpers/wait-for.js';

/** Far longer than the answer the API should give: the old publish waited for it, then dropped the link. */
const CONFIRM_TIMEOUT_MS = 8_000;

const pause = (n: number): RunCommand => ({ type: 'pause', runId: `run-${n}` });

/** How long `publish` took, and its error if it failed. */
async function timed(publish: () => Promise<void>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await publish();
    return { ms: performance.now() - started, error: null };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

/**
 * A master's run command during a RabbitMQ resource alarm: SQL has the change already and the
 * schedulers follow SQL, so the API is told at once that the command was not sent, and the run
 * control keeps its link (dropping it would buy nothing: the next connection is blocked alike).
 */
it(
  'a run command the broker blocks fails at once, the link stays, and commands flow after the alarm',
  { timeout: 90_000 },
  async () => {
    const exchange = `test-run-control-${randomUUID()}`;
    const { logger, lines } = memoryLogger();
    const master = await openRabbitRunControl({
      url: AMQP_URL,
      exchange,
      logger,
      confirmTimeoutMs: CONFIRM_TIMEOUT_MS,
    });
    const scheduler = await openRabbitRunControl({ url: AMQP_URL, exchange, logger: silentLogger() });
    const received: string[] = [];
    await scheduler.subscribe((command) => void received.push(command.runId));
    let alarmed = false;
    try {
      await master.publish(pause(0));
      await waitFor(() => received.includes('run-0'), {
        timeoutMs: 5_000,
        message: 'a command before the alarm',
      });

      await rabbitDiskAlarm.raise();
      alarmed = true;
      // The alarm goes off at the node's next disk check; until then publishes go through.
      let n = 0;
      let blocked: { ms: number; error: unknown } | null = null;
      await waitFor(
        async () => {
          const attempt = await timed(() => master.publish(pause(++n)));
          if (attempt.error !== null) blocked = attempt;
          return blocked !== null;
        },
        { timeoutMs: 30_000, intervalMs: 100, message: 'a publish the broker blocks' },
      );
      const first = blocked as unknown as { ms: number; error: unknown };
      assert.ok(
        first.ms < 3_000,
        `told within ${Math.round(first.ms)} ms, not at the ${CONFIRM_TIMEOUT_MS} ms timeout`,
      );
      assert.match(String(first.error), /RabbitMQ blocks publishing/);
      assert.equal((first.error as { code?: string }).code, 'RUN_CONTROL_UNAVAILABLE');
      const again = await timed(() => master.publish(pause(1_000)));
      assert.match(String(again.error), /RabbitMQ blocks publishing/, 'the next one too');
      assert.ok(again.ms < 100, `and at once (${Math.round(again.ms)} ms)`);

      await rabbitDiskAlarm.clear();
      alarmed = false;
      await waitFor(async () => (await timed(() => master.publish(pause(2_000)))).error === null, {
        timeoutMs: 30_000,
        intervalMs: 200,
        message: 'a publish goes through once the alarm clears',
      });
      await waitFor(() => received.includes('run-2000'), {
        timeoutMs: 5_000,
        message: 'the scheduler receives it',
      });
      assert.deepEqual(
        lines().filter((l) => l.msg === 'dropping the broker link'),
        [],
        'the link was never dropped',
      );
    } finally {
      if (alarmed) await rabbitDiskAlarm.clear();
      await master.close();
      await scheduler.close();
      const admin = await rabbitAdmin();
      await admin.channel.deleteExchange(exchange);
      await admin.deleteQueuesAndClose([]);
    }
  },
);
