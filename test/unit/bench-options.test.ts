import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const BENCH = new URL('../../scripts/bench/main.js', import.meta.url).pathname;
const run = promisify(execFile);

/** Runs the bench's entry with `args`; these all end before any site or runner starts. */
async function bench(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BENCH, ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

test('each bench prints its own usage for --help and exits 0', async () => {
  const main = await bench('--help');
  assert.equal(main.code, 0);
  assert.match(main.stdout, /^usage: npm run bench -- \[options\]/);
  const hosts = await bench('--hosts', '--help');
  assert.equal(hosts.code, 0);
  assert.match(hosts.stdout, /^usage: npm run bench -- --hosts/);
  assert.match(hosts.stdout, /--host-delay MS/);
  const extract = await bench('--extract', '-h');
  assert.equal(extract.code, 0);
  assert.match(extract.stdout, /^usage: npm run bench -- --extract/);
  const client = await bench('--http-client', '--help');
  assert.equal(client.code, 0);
  assert.match(client.stdout, /^usage: npm run bench -- --http-client/);
});

test('an option a bench cannot run with: what is wrong and the usage, exit 2, no stack trace', async () => {
  const cases: [string[], RegExp, RegExp][] = [
    [['--pagez', '5'], /^bench: Unknown option '--pagez'/, /usage: npm run bench -- \[options\]/],
    [['--pages', '0'], /--pages must be a positive integer, got "0"/, /usage: npm run bench -- \[options\]/],
    [
      ['--kafka-compression', 'zstd'],
      /--kafka-compression must be one of none, gzip, got "zstd"/,
      /usage: npm run bench -- \[options\]/,
    ],
    [
      ['--redirects', '--cluster'],
      /--redirects runs the embedded ackcrawl only \(no --cluster, --only ackcrawl\)/,
      /usage: npm run bench -- \[options\]/,
    ],
    [
      ['--redirects', '--only', 'ackcrawl,bare'],
      /--redirects runs the embedded ackcrawl only/,
      /usage: npm run bench -- \[options\]/,
    ],
    [
      ['--hosts', '--host-count', 'x'],
      /^hosts bench: invalid options:\n {2}--host-count must be an integer/,
      /usage: npm run bench -- --hosts/,
    ],
    [['--hosts', '--hostz'], /^hosts bench: Unknown option '--hostz'/, /usage: npm run bench -- --hosts/],
    [
      ['--extract', '--rounds', '0'],
      /^extract bench: invalid options:\n {2}--rounds must be a whole number 1..1000, got "0"/,
      /usage: npm run bench -- --extract/,
    ],
    [
      ['--http-client', '--rounds', '0'],
      /^http-client bench: invalid options:\n {2}--rounds must be a positive integer, got "0"/,
      /usage: npm run bench -- --http-client/,
    ],
    [
      ['--http-client', '--requestz', '5'],
      /^http-client bench: Unknown option '--requestz'/,
      /usage: npm run bench -- --http-client/,
    ],
  ];
  for (const [args, problem, usage] of cases) {
    const { code, stderr } = await bench(...args);
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, problem, args.join(' '));
    assert.match(stderr, usage, args.join(' '));
    assert.doesNotMatch(stderr, /\n\s+at /, `${args.join(' ')}: no stack trace`);
  }
});
