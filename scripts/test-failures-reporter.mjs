import { inspect } from 'node:util';

// A node:test reporter that writes one JSON line per failed test (not per failed suite) and one
// for the run's totals, to the destination it is given. scripts/run-tests.mjs runs it beside the
// TAP reporter and prints the failures again after the TAP output, so whoever reads only the end
// of a long run's log still sees which test failed and why.

/**
 * The message of a test's failure with its stack, without node's own frames: node wraps what the
 * test threw in an ERR_TEST_FAILURE.
 */
function reason(error) {
  const cause = error?.cause ?? error;
  if (!(cause instanceof Error)) return printable(cause);
  const text = cause.stack ?? `${cause.name}: ${cause.message}`;
  return text
    .split('\n')
    .filter((line) => !/^\s+at (.*\()?(node:|new Promise)/.test(line))
    .join('\n');
}

/**
 * What a test threw that is not an Error, as text. `String()` throws on an object without a
 * usable toString (an assertion's actual value, deserialised from the test's process, can be one):
 * a reporter that throws ends the whole run without its totals.
 */
function printable(value) {
  if (typeof value !== 'object' || value === null) return String(value);
  if (typeof value.stack === 'string') return value.stack;
  if (typeof value.message === 'string') return value.message;
  try {
    return inspect(value, { depth: 2 }).slice(0, 2_000);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

export default async function* failures(source) {
  const totals = {};
  for await (const event of source) {
    if (event.type === 'test:fail' && event.data.details?.type !== 'suite') {
      const { name, file, line, details } = event.data;
      yield `${JSON.stringify({ kind: 'fail', name, file, line, reason: reason(details?.error) })}\n`;
    } else if (event.type === 'test:diagnostic' && event.data.nesting === 0) {
      const total = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(event.data.message);
      if (total) totals[total[1]] = Number(total[2]);
    }
  }
  yield `${JSON.stringify({ kind: 'totals', ...totals })}\n`;
}
