import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const MODULE = new URL('../../shared/processes/running-heap.js', import.meta.url).href;
const CLI = new URL('../../master/cli/main.js', import.meta.url).pathname;
const MiB = 1024 * 1024;
const run = promisify(execFile);

/**
 * Keeps 20,000 small objects alive at a time, long enough for V8 to grow its young generation to
 * its largest; then prints its size. The work comes in 600 short turns of the event loop, as a
 * role's does (a frame, an outcome): the cap is steered between turns, and a turn that allocated
 * enough for two growths could pass it by a step (running-heap.ts). One CI run had turns of 50,000
 * objects, and the young generation reached 16 MiB.
 */
const CHURN_AND_PRINT = `
  let keep = [];
  for (let turn = 0; turn < 600; turn++) {
    for (let i = 0; i < 5000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { getHeapSpaceStatistics } = await import('node:v8');
  process.stderr.write('\\nyoung ' + getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size + '\\n');`;

/** The young generation after the churn, in another node process (the settings are process-wide). */
async function youngAfterChurn(script: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const result = await run(process.execPath, ['--input-type=module', '-e', script], { env }).catch(
    (err: { stderr: string }) => err,
  );
  const match = /young (\d+)/.exec(result.stderr);
  assert.ok(match, `no figure in: ${result.stderr}`);
  return Number(match[1]);
}

const withModule = (setup: string): string => `
  const { applyRoleHeap, capYoungGeneration } = await import(${JSON.stringify(MODULE)});
  ${setup}
  ${CHURN_AND_PRINT}`;

test('capped, the young generation grows to the cap and no further', async () => {
  assert.ok((await youngAfterChurn(withModule(''))) > 8 * MiB, 'V8 grows it past 8 MiB without');
  const capped = await youngAfterChurn(withModule('capYoungGeneration(4);'));
  assert.ok(capped <= 8 * MiB, `two semi-spaces of 4 MiB at most, got ${capped / MiB} MiB`);
  assert.ok(capped > 2 * MiB, `it still grows up to the cap, got ${capped / MiB} MiB`);
});

test('a role heap leaves alone a size the process was started with', async () => {
  const heap = '{ semiSpaceMiB: 4, heapGrowingPercent: 50 }';
  const applied = await youngAfterChurn(withModule(`applyRoleHeap(${heap}, []);`));
  assert.ok(applied <= 8 * MiB, `applied without the flag: ${applied / MiB} MiB`);
  const given = await youngAfterChurn(withModule(`applyRoleHeap(${heap}, ['--max-semi-space-size=16']);`));
  assert.ok(given > 8 * MiB, 'not capped when the process has its own --max-semi-space-size');
});

test('`ackcrawl scheduler` and `ackcrawl crawler` run with their roles\u2019 young generation', async () => {
  // The bin, with a role whose configuration fails at once: its exit is held back for the churn.
  const young = (args: string[]): Promise<number> =>
    youngAfterChurn(
      `
      const exit = process.exit.bind(process);
      process.exit = (code) => { void (async () => { ${CHURN_AND_PRINT}; exit(code); })(); };
      process.argv = [process.argv[0], ${JSON.stringify(CLI)}, ...${JSON.stringify(args)}];
      await import(${JSON.stringify(CLI)});`,
      { ...process.env, ACKCRAWL_LISTEN_PORT: 'not a port', ACKCRAWL_CONCURRENCY: 'not a number' },
    );
  const scheduler = await young(['scheduler']);
  assert.ok(scheduler <= 8 * MiB, `the scheduler: semi-spaces of 4 MiB, got ${scheduler / MiB} MiB`);
  const crawler = await young(['crawler']);
  assert.ok(crawler <= 16 * MiB, `a crawler: semi-spaces of 8 MiB, got ${crawler / MiB} MiB`);
  assert.ok((await young(['why', 'not a url'])) > 16 * MiB, 'other commands: V8\u2019s own');
});

test('a flag given to node is found in either spelling V8 takes, with or without a value', async () => {
  const { hasNodeFlag } = (await import(MODULE)) as typeof import('../../shared/processes/running-heap.js');
  assert.ok(hasNodeFlag(['--max-semi-space-size=16'], '--max-semi-space-size'));
  assert.ok(hasNodeFlag(['--max_semi_space_size=16'], '--max-semi-space-size'), 'underscores');
  assert.ok(hasNodeFlag(['--max-semi_space-size'], '--max-semi-space-size'), 'mixed, no value');
  assert.ok(hasNodeFlag(['--inspect', '--heap_growing_percent=0'], '--heap-growing-percent'));
  assert.ok(!hasNodeFlag(['--max-semi-space-size-x=1'], '--max-semi-space-size'), 'another flag');
  assert.ok(!hasNodeFlag(['--max-old-space-size=512'], '--max-semi-space-size'));
  assert.ok(!hasNodeFlag([], '--max-semi-space-size'));
});
