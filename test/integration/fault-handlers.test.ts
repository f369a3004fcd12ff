import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { FAULT_EXIT_CODE } from '../../shared/lifecycle/faults.js';

const FAULTS = pathToFileURL(new URL('../../shared/lifecycle/faults.js', import.meta.url).pathname).href;
const LOGGER = pathToFileURL(new URL('../../shared/logger.js', import.meta.url).pathname).href;

/** Runs a script that installs the fault handlers of a role named `probe`, then does `fault`. */
function run(fault: string): Promise<{ code: number | null; lines: Record<string, unknown>[] }> {
  const script = `
    import { exitOnFault } from '${FAULTS}';
    import { createLogger } from '${LOGGER}';
    exitOnFault(createLogger({ name: 'probe' }));
    ${fault}
    setTimeout(() => console.log('still running'), 2000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      assert.equal(stdout, '', 'the process did not go on');
      const lines = stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, lines });
    }),
  );
}

describe('exitOnFault: an error nothing handled, in any role', () => {
  for (const [kind, fault] of [
    ['unhandledRejection', `Promise.reject(new Error('lost promise'));`],
    ['uncaughtException', `setTimeout(() => { throw new Error('lost promise'); }, 10);`],
  ] as const) {
    test(`${kind}: one structured fatal line, then exit ${FAULT_EXIT_CODE} at once`, async () => {
      const { code, lines } = await run(fault);
      assert.equal(code, FAULT_EXIT_CODE);
      assert.equal(lines.length, 1, JSON.stringify(lines));
      const [line] = lines;
      assert.equal(line?.level, 60, 'fatal');
      assert.equal(line?.fault, kind);
      assert.equal(line?.role, 'probe');
      const err = line?.err as { message?: string; stack?: string } | undefined;
      assert.equal(err?.message, 'lost promise');
      assert.match(err?.stack ?? '', /Error: lost promise/);
    });
  }
});
