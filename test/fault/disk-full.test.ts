import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import type { AppError } from '../../shared/errors.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { logLines } from '../helpers/log-lines.js';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { startCli } from '../helpers/cli.js';
import { descendants } from '../helpers/process-tree.js';
import { fillDisk, freeDisk, mountTmpfs } from '../helpers/tmpfs.js';
import { waitFor } from '../helpers/wait-for.js';

const MiB = 1024 * 1024;

const record = (url: string, padBytes: number): SinkRecord => ({
  key: url,
  value: Buffer.from(JSON.stringify({ runId: 'default', url, outcome: 'ok', pad: 'x'.repeat(padBytes) })),
});

/** Every line of every segment in `dir`, each checked to be a whole JSON record. */
function segmentLines(dir: string): { runId: 'default'; url: string }[] {
  const lines: { runId: 'default'; url: string }[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => /^pages-\d+\.jsonl$/.test(f))
    .sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${file} ends with a whole line`);
    for (const [i, line] of text.split('\n').slice(0, -1).entries()) {
      try {
        lines.push(JSON.parse(line) as { runId: 'default'; url: string });
      } catch {
        assert.fail(`${file} line ${i + 1} is not JSON: ${line.slice(0, 80)}…`);
      }
    }
  }
  return lines;
}

describe('a full disk (a real tmpfs)', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'ackcrawl-disk-full-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('file sink: a short write leaves no fragment, the batch is written whole once space is freed', async () => {
    const disk = mountTmpfs(join(root, 'sink'), 2 * MiB);
    try {
      const dir = join(disk.dir, 'out');
      const sink = new FileSink({ dir });
      const first = await sink.write([record('https://a.test/0', 10_000)]);
      const path = join(dir, 'pages-000001.jsonl');
      const durable = statSync(path).size;
      assert.equal(first, `1:${durable}`);
      // Room for part of the next batch only: its first write is short, the next fails.
      const filler = fillDisk(disk.dir, 24 * 1024);
      const batch = [1, 2, 3].map((i) => record(`https://a.test/${i}`, 20_000));
      let cutBackAt = 0n;
      for (let attempt = 0; attempt < 3; attempt++) {
        await assert.rejects(sink.write(batch), (err: AppError) => {
          assert.equal(err.code, 'SINK_DISK_FULL');
          assert.equal(err.retriable, true);
          assert.ok(err.message.includes(dir), `the message names the directory: ${err.message}`);
          assert.equal(err.details?.path, dir);
          assert.equal(typeof err.details?.freeBytes, 'number');
          return true;
        });
        assert.equal(statSync(path).size, durable, 'the failed write was cut back to the durable end');
        // The first attempt wrote part of the batch and cut it back; a retry on a disk still full
        // does not touch the file (a reader never sees a fragment, however long the stall).
        const { mtimeNs } = statSync(path, { bigint: true });
        if (attempt === 0) cutBackAt = mtimeNs;
        else assert.equal(mtimeNs, cutBackAt, 'a retry while the disk is full writes nothing');
      }
      freeDisk(filler);
      const checkpoint = await sink.write(batch);
      assert.equal(checkpoint, `1:${statSync(path).size}`, 'the checkpoint is the end of the file');
      const lines = segmentLines(dir);
      assert.deepEqual(
        lines.map((l) => l.url),
        ['https://a.test/0', 'https://a.test/1', 'https://a.test/2', 'https://a.test/3'],
      );
      await sink.close();
    } finally {
      disk.unmount();
    }
  });

  test('file sink: a full segment whose successor cannot be created still reports its write durable', async () => {
    // Room for the folder and one segment only: rotating cannot create the next file.
    const disk = mountTmpfs(join(root, 'inodes'), 2 * MiB, { inodes: 4 });
    try {
      const dir = join(disk.dir, 'out');
      const errors: unknown[] = [];
      const sink = new FileSink({ dir, segmentBytes: 4096, onError: (err) => errors.push(err) });
      const filler = join(disk.dir, 'spare');
      writeFileSync(filler, 'x'); // takes the last inode
      const full = await sink.write([record('https://a.test/0', 5_000)]);
      const size = statSync(join(dir, 'pages-000001.jsonl')).size;
      assert.equal(full, `1:${size}`, 'the write that filled the segment is durable and said so');
      assert.equal(errors.length, 1, 'the failed rotation is reported, not thrown');
      await assert.rejects(sink.write([record('https://a.test/1', 100)]), { code: 'SINK_DISK_FULL' });
      freeDisk(filler);
      assert.equal(
        await sink.write([record('https://a.test/1', 100)]),
        `2:${Buffer.byteLength(JSON.stringify({ runId: 'default', url: 'https://a.test/1', outcome: 'ok', pad: 'x'.repeat(100) })) + 1}`,
      );
      assert.deepEqual(
        segmentLines(dir).map((l) => l.url),
        ['https://a.test/0', 'https://a.test/1'],
        'each record once',
      );
      await sink.close();
    } finally {
      disk.unmount();
    }
  });

  test('file sink: a compression that fails on a full disk gives its space back and leaves the plain segment', async () => {
    const disk = mountTmpfs(join(root, 'gzip'), 2 * MiB);
    try {
      const dir = join(disk.dir, 'out');
      const errors: unknown[] = [];
      const sink = new FileSink({
        dir,
        segmentBytes: 64 * 1024,
        gzip: true,
        onError: (err) => errors.push(err),
      });
      const random = (url: string): SinkRecord => ({
        key: url,
        value: Buffer.from(
          JSON.stringify({
            runId: 'default',
            url,
            outcome: 'ok',
            pad: randomBytes(60_000).toString('base64'),
          }),
        ),
      });
      // Room for the record (80 KB) but not for it compressed as well (about 60 KB).
      fillDisk(disk.dir, 100 * 1024);
      await sink.write([random('https://a.test/0')]); // fills the segment: it is closed and compressed
      await waitFor(() => errors.length > 0, { timeoutMs: 5_000, message: 'the compression failed' });
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.endsWith('.gz.tmp') || f.endsWith('.gz')),
        [],
        'no partial .gz left taking space',
      );
      assert.ok(readdirSync(dir).includes('pages-000001.jsonl'), 'the plain segment stays');
      await sink.close().catch(() => undefined);
    } finally {
      disk.unmount();
    }
  });

  test('sqlite frontier: SQLITE_FULL is a retriable FRONTIER_DISK_FULL, nothing half-applied', async () => {
    const disk = mountTmpfs(join(root, 'frontier'), 8 * MiB);
    try {
      const path = join(disk.dir, 'frontier.sqlite');
      const frontier = openSqliteFrontier({ path });
      const task = (url: string) => ({
        runId: 'default',
        url,
        host: 'a.test',
        depth: 1,
        priority: 0,
        parentUrl: null,
      });
      await frontier.push([task('https://a.test/')]);
      const filler = fillDisk(disk.dir);
      const many = Array.from({ length: 2000 }, (_, i) => task(`https://a.test/${i}/${'p'.repeat(400)}`));
      await assert.rejects(frontier.push(many), (err: AppError) => {
        assert.equal(err.code, 'FRONTIER_DISK_FULL');
        assert.equal(err.retriable, true);
        assert.ok(err.message.includes(path), `the message names the file: ${err.message}`);
        assert.equal(typeof err.details?.freeBytes, 'number');
        return true;
      });
      assert.equal((await frontier.stats()).total, 1, 'the failed push applied nothing');
      freeDisk(filler);
      assert.equal((await frontier.push(many)).length, 2000, 'the same push works once space is freed');
      assert.equal((await frontier.stats()).total, 2001);
      await frontier.close();
    } finally {
      disk.unmount();
    }
  });

  describe('an embedded crawl', () => {
    const PAGES = 400;
    let site: GeneratedSite;
    before(async () => {
      site = await startGeneratedSite({ pages: PAGES, pageBytes: 20_000 });
    });
    after(() => site.close());

    test('records and frontier on the full disk: stalls with a message naming it, resumes once space is freed, loses nothing', () =>
      crawlOnFullDisk(site, PAGES, join(root, 'crawl-all'), null));

    test('records alone fill the disk (frontier elsewhere): short writes leave no fragment in any segment', () =>
      crawlOnFullDisk(site, PAGES, join(root, 'crawl-records'), join(root, 'frontier-elsewhere')));
  });
});

/**
 * `ackcrawl crawl --out <tmpfs>` with the disk nearly full: it must stall with a clear message,
 * write nothing half, wait, and finish once space is freed. With `frontierDir`, frontier.sqlite is
 * a symlink to a file there (SQLite follows it, its WAL included), so only records fill the disk.
 */
async function crawlOnFullDisk(
  site: GeneratedSite,
  pages: number,
  mountAt: string,
  frontierDir: string | null,
): Promise<void> {
  const disk = mountTmpfs(mountAt, 16 * MiB);
  const out = join(disk.dir, 'out');
  if (frontierDir !== null) {
    mkdirSync(out, { recursive: true });
    mkdirSync(frontierDir, { recursive: true });
    symlinkSync(join(frontierDir, 'frontier.sqlite'), join(out, 'frontier.sqlite'));
  }
  const run = startCli([
    'crawl',
    site.url,
    '--out',
    out,
    '--allow-private',
    '--host-delay',
    '0',
    '--host-concurrency',
    '8',
    '--json',
  ]);
  let stderr = '';
  run.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    // Room for a third of the site's records: the crawl must hit the full disk.
    const filler = fillDisk(disk.dir, 3 * MiB);
    const stallLines = () =>
      logLines(stderr).filter(
        (l) =>
          (l.code === 'SINK_DISK_FULL' || l.code === 'FRONTIER_DISK_FULL') &&
          l.msg?.startsWith('outcomes cannot be made durable'),
      );
    await waitFor(() => stallLines().length > 0, {
      timeoutMs: 60_000,
      message: `a disk-full stall reported; stderr so far: ${stderr.slice(-2000)}`,
    });
    const [first] = stallLines();
    console.log(
      `# disk full (${frontierDir === null ? 'all on it' : 'records only'}): stalled on ${first?.code}`,
    );
    if (frontierDir !== null) assert.equal(first?.code, 'SINK_DISK_FULL', 'the records filled the disk');
    assert.ok(first?.msg?.includes(out), `the message names the directory: ${first?.msg}`);
    assert.match(first?.msg ?? '', /free/);

    // Stalled: nothing more becomes durable, and what is on disk is whole records only.
    const stalledAt = segmentLines(out).length;
    assert.ok(stalledAt > 0 && stalledAt < pages, `stalled mid-crawl (${stalledAt} records)`);
    const watchUntil = Date.now() + 4_000;
    await waitFor(() => Date.now() >= watchUntil || segmentLines(out).length !== stalledAt, {
      timeoutMs: 10_000,
    });
    assert.equal(segmentLines(out).length, stalledAt, 'no record written while the disk is full');
    assert.equal(run.child.exitCode, null, 'the crawl waits for space instead of exiting');
    assert.equal(
      new Set(stallLines().map((l) => l.code)).size,
      stallLines().length,
      'each failure reported once per interval, not once per retry',
    );

    freeDisk(filler);
    const freedAt = Date.now();
    await waitFor(() => logLines(stderr).some((l) => /durable again/.test(l.msg ?? '')), {
      timeoutMs: 30_000,
      message: 'the end of the stall reported',
    });
    const resumedMs = Date.now() - freedAt;
    const result = await run.done;
    assert.equal(result.code, 0, stderr.slice(-4000));
    console.log(`# disk full: resumed ${resumedMs} ms after space was freed`);

    const lines = segmentLines(out);
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(l.url, (counts.get(l.url) ?? 0) + 1);
    const expected = Array.from({ length: pages }, (_, i) => (i === 0 ? site.url : `${site.url}p/${i}`));
    assert.deepEqual([...counts.keys()].sort(), expected.sort(), 'every page of the site has a record');
    const duplicates = lines.length - counts.size;
    console.log(`# disk full: ${lines.length} records for ${pages} pages, ${duplicates} duplicates`);
    assert.equal(duplicates, 0, 'no page recorded twice');

    const frontier = openSqliteFrontier({ path: join(out, 'frontier.sqlite') });
    try {
      const stats = await frontier.stats();
      assert.deepEqual(
        { total: stats.total, done: stats.done, failed: stats.failed, leased: stats.leased },
        { total: pages, done: pages, failed: 0, leased: 0 },
      );
      const last = readdirSync(out)
        .filter((f) => /^pages-\d+\.jsonl$/.test(f))
        .sort()
        .at(-1) as string;
      const index = Number(/\d+/.exec(last)?.[0]);
      assert.equal(
        await frontier.checkpoint(),
        `${index}:${statSync(join(out, last)).size}`,
        'the frontier’s checkpoint is the end of the records',
      );
    } finally {
      await frontier.close();
    }
    if (frontierDir !== null) {
      assert.deepEqual(
        readdirSync(out).filter((f) => f.startsWith('frontier.sqlite-')),
        [],
        'the frontier’s WAL lived beside its real file, off the full disk',
      );
    }
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      for (const p of descendants(run.child.pid as number)) process.kill(p.pid, 'SIGKILL');
      run.child.kill('SIGKILL');
    }
    await run.done;
    disk.unmount();
  }
}
