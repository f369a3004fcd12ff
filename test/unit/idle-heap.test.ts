import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const MODULE = new URL('../../shared/processes/idle-heap.js', import.meta.url).href;
const MiB = 1024 * 1024;

/** A node process that grows its young generation, then waits with the trimmer (or without). */
function child(trim: boolean): ReturnType<typeof spawn> {
  const script = `
    import { trimYoungGenerationWhenIdle, youngGenerationBytes } from ${JSON.stringify(MODULE)};
    let keep = [];
    for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 300000) keep = []; }
    keep = null;
    console.log('grown ' + youngGenerationBytes());
    ${trim ? 'trimYoungGenerationWhenIdle({ intervalMs: 300, maxIntervalMs: 1000 });' : ''}
    const report = setInterval(() => console.log('young ' + youngGenerationBytes()), 200);
    process.stdin.on('data', () => { clearInterval(report); process.stdin.destroy(); });
  `;
  return spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

test('a waiting process gives back the young generation its start-up grew', async (t) => {
  const proc = child(true);
  // A failed assertion must not leave the child holding this file open.
  t.after(() => proc.kill());
  const lines = createInterface({ input: proc.stdout! });
  let grown = 0;
  let young = Infinity;
  const deadline = Date.now() + 30_000;
  for await (const line of lines) {
    const [what, bytes] = line.split(' ');
    if (what === 'grown') grown = Number(bytes);
    if (what === 'young') young = Number(bytes);
    if (young <= 2 * MiB || Date.now() > deadline) break;
  }
  // The young generation grew past the trimmer's threshold, then went back under it.
  assert.ok(grown > 4 * MiB, `the young generation grew to ${grown} bytes`);
  assert.ok(young <= 2 * MiB, `the young generation stayed at ${young} bytes for 30 s`);
  // The trimmer's timer does not keep the process alive once its own work is done.
  proc.stdin!.end('done\n');
  const [code] = (await once(proc, 'exit')) as [number | null];
  assert.equal(code, 0);
});

test('without it, the same process keeps its young generation', async (t) => {
  const proc = child(false);
  t.after(() => proc.kill());
  const lines = createInterface({ input: proc.stdout! });
  let grown = 0;
  let reports = 0;
  let smallest = Infinity;
  // Twelve reports, 2.4 s: eight times the trimmer's first interval above.
  for await (const line of lines) {
    const [what, bytes] = line.split(' ');
    if (what === 'grown') grown = Number(bytes);
    if (what === 'young') smallest = Math.min(smallest, Number(bytes));
    if (what === 'young' && ++reports === 12) break;
  }
  proc.stdin!.end('done\n');
  await once(proc, 'exit');
  assert.ok(grown > 4 * MiB, `the young generation grew to ${grown} bytes`);
  assert.ok(smallest > 2 * MiB, `the young generation shrank by itself to ${smallest} bytes`);
});
