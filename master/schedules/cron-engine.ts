import { CronExpressionParser } from 'cron-parser';
import cron from 'node-cron';
import type { Problem } from '../../shared/http/error-responses.js';

/** A watch on one expression: calls back at each of its fire times until stopped. */
export interface CronWatch {
  stop(): void;
}

/**
 * The cron engine the schedule loop is given (docs/schedules.md): node-cron wakes the loop at fire
 * times, in the schedule's time zone; cron-parser lists fire times between two instants (what
 * node-cron cannot), for misfire detection and the next fire times shown by the API.
 */
export interface CronEngine {
  /** Every problem with the expression and the time zone; empty when both are good. */
  problems(expression: string, timeZone: string): Problem[];
  /** Calls `onFire` at every fire time, with the fire time it is for (ms since the epoch). */
  watch(expression: string, timeZone: string, onFire: (fireAt: number) => void): CronWatch;
  /** Fire times in (afterMs, untilMs], oldest first: the newest `max` of them when there are more. */
  between(expression: string, timeZone: string, afterMs: number, untilMs: number, max: number): number[];
  /** The next `count` fire times after `fromMs`. */
  next(expression: string, timeZone: string, fromMs: number, count: number): number[];
}

/** Whether Intl knows the zone (IANA names: `Europe/Paris`, `UTC`, `America/New_York`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

function iterate(expression: string, timeZone: string, fromMs: number) {
  return CronExpressionParser.parse(expression, { currentDate: new Date(fromMs), tz: timeZone });
}

/** node-cron for validation and wake-ups, cron-parser for fire-time arithmetic. */
export function nodeCronEngine(): CronEngine {
  return {
    problems(expression, timeZone) {
      const problems: Problem[] = [];
      const zoneOk = isTimeZone(timeZone);
      if (!zoneOk)
        problems.push({ field: 'timeZone', message: `'${timeZone}' is not an IANA time zone Intl knows` });
      const detailed = cron.validateDetailed(expression);
      if (!detailed.valid) {
        const errors =
          detailed.errors.length > 0
            ? detailed.errors
            : [{ field: 'expression', message: 'not a cron expression' }];
        for (const e of errors) problems.push({ field: 'expression', message: `${e.field}: ${e.message}` });
      } else {
        // Both engines must read it: node-cron fires it, cron-parser counts its fire times.
        try {
          iterate(expression, zoneOk ? timeZone : 'UTC', Date.now()).next();
        } catch (err) {
          problems.push({ field: 'expression', message: (err as Error).message });
        }
      }
      return problems;
    },

    watch(expression, timeZone, onFire) {
      const task = cron.schedule(
        expression,
        (context) => {
          // The fire time is the scheduled second, not the moment the timer ran.
          onFire(Math.floor(context.date.getTime() / 1000) * 1000);
        },
        { timezone: timeZone, suppressMissedWarning: true },
      );
      return {
        stop: () => {
          void task.destroy();
        },
      };
    },

    between(expression, timeZone, afterMs, untilMs, max) {
      // Backwards from the end: a long downtime of a per-second schedule costs `max` steps, not days of them.
      const times: number[] = [];
      const it = iterate(expression, timeZone, untilMs + 1);
      while (times.length < max && it.hasPrev()) {
        const at = it.prev().getTime();
        if (at <= afterMs) break;
        times.push(at);
      }
      return times.reverse();
    },

    next(expression, timeZone, fromMs, count) {
      return iterate(expression, timeZone, fromMs)
        .take(count)
        .map((d) => d.getTime());
    },
  };
}
