import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const MODULE = new URL('../../shared/processes/young-generation.js', import.meta.url).href;
const CLI = new URL('../../master/cli/main.js', import.meta.url).pathname;
const MiB = 1024 * 1024;
const run = promisify(execFile);

/**
 * The young generation of a node process (another one: the setting is process-wide) after it
 * churns through many small objects, with `holdYoungGeneration` and `letYoungGenerationGrow`
 * called before the churn or not.
 */
async function youngAfterChurn(options: { hold: boolean; grow: boolean }): Promise<number> {
  const script = `
    const { holdYoungGeneration, letYoungGenerationGrow } = await import(${JSON.stringify(MODULE)});
    ${options.hold ? 'holdYoungGeneration();' : ''}
    ${options.grow ? 'letYoungGenerationGrow();' : ''}
    const { getHeapSpaceStatistics } = await import('node:v8');
    let keep = [];
    for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
    console.log(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return Number(stdout.trim());
}

test('held, the young generation stays at its start size while the process allocates', async () => {
  assert.ok((await youngAfterChurn({ hold: false, grow: false })) > 4 * MiB, 'V8 grows it without');
  assert.ok((await youngAfterChurn({ hold: true, grow: false })) <= 2 * MiB, 'it stays at 2 MiB with');
});

test('letYoungGenerationGrow gives V8 its own growth back', async () => {
  assert.ok((await youngAfterChurn({ hold: true, grow: true })) > 4 * MiB);
});

test('the CLI holds it for the commands that wait (crawl, serve), not for the others', async () => {
  // The bin, with a command that fails at once after the preAction hook; at exit the process
  // allocates, and the young generation grows if the command let it.
  const young = async (args: string[]): Promise<number> => {
    const script = `
      const { getHeapSpaceStatistics } = await import('node:v8');
      process.on('exit', () => {
        let keep = [];
        for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
        process.stderr.write('\\nyoung ' + getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size + '\\n');
      });
      process.argv = [process.argv[0], ${JSON.stringify(CLI)}, ...${JSON.stringify(args)}];
      await import(${JSON.stringify(CLI)});
    `;
    const result = await run(process.execPath, ['--input-type=module', '-e', script]).catch(
      (err: { stderr: string }) => err,
    );
    const match = /young (\d+)/.exec(result.stderr);
    assert.ok(match, `no figure in: ${result.stderr}`);
    return Number(match[1]);
  };
  assert.ok((await young(['crawl', 'not a url'])) <= 2 * MiB, 'crawl holds it');
  assert.ok((await young(['why', 'not a url'])) > 4 * MiB, 'why lets it grow');
});
