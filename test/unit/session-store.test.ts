import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { CookieSession } from '../../scheduler/runs/cookie-session.js';
import { HostedRun } from '../../scheduler/runs/hosted-run.js';
import { SessionFlusher } from '../../scheduler/runs/session-flusher.js';
import { SessionStore } from '../../scheduler/runs/session-store.js';
import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';
import { silentLogger } from '../../shared/logger.js';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tmpFile = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-sessions-'));
  dirs.push(dir);
  return join(dir, 'state', 'sessions.sqlite');
};

const cookie = (name: string, domain: string, value = `${name}-v`): WireCookie => ({
  name,
  value,
  domain,
  path: '/',
  expires: null,
  hostOnly: true,
  secure: false,
  httpOnly: true,
});

test('the store: no file until a session is written; what is written is read back after a reopen', () => {
  const path = tmpFile();
  const store = new SessionStore(path);
  assert.deepEqual(store.load('run-1'), []);
  store.forget('run-1');
  assert.equal(existsSync(path), false, 'a scheduler whose runs keep no session has no file');

  store.write(
    'run-1',
    new Map([
      ['a.test', [cookie('sid', 'a.test'), cookie('x', 'a.test')]],
      ['b.test', [cookie('k', 'b.test')]],
    ]),
  );
  store.write('run-2', new Map([['a.test', [cookie('sid', 'a.test', 'other-run')]]]));
  store.write(
    'run-1',
    new Map([
      ['a.test', [cookie('sid', 'a.test', 'renewed')]],
      ['b.test', null],
    ]),
  );
  store.close();

  const again = new SessionStore(path);
  assert.deepEqual(again.load('run-1'), [cookie('sid', 'a.test', 'renewed')]);
  assert.deepEqual(again.load('run-2'), [cookie('sid', 'a.test', 'other-run')]);
  again.forget('run-1');
  assert.deepEqual(again.load('run-1'), []);
  assert.equal(again.load('run-2').length, 1, 'another run keeps its own');
  again.close();

  // A row that does not read as cookies is left out, not a failure.
  const db = new Database(path);
  db.prepare(
    "INSERT INTO session_cookies (run_id, domain, cookies) VALUES ('run-2', 'c.test', '{broken')",
  ).run();
  db.close();
  const third = new SessionStore(path);
  assert.deepEqual(third.load('run-2'), [cookie('sid', 'a.test', 'other-run')]);
  third.close();
});

test('a run that keeps a session starts with what was written of it, and the flusher writes what changes', () => {
  const path = tmpFile();
  const store = new SessionStore(path);
  store.write('run-1', new Map([['a.test', [cookie('sid', 'a.test')]]]));
  const hosted: HostedRun[] = [];
  const flusher: SessionFlusher = new SessionFlusher({ store, runs: () => hosted, logger: silentLogger() });
  const settings = parseCrawlSettings({ seeds: ['https://a.test/'], sessionCookies: true });
  const run: HostedRun = new HostedRun(
    { runId: 'run-1', jobId: 'job', settings },
    Date.now,
    (f) => f,
    (id) => flusher.saved(id),
  );
  hosted.push(run);
  assert.deepEqual(run.cookies?.forUrl('https://a.test/'), [cookie('sid', 'a.test')]);

  run.cookies?.merge([cookie('step', 'a.test')]);
  flusher.flush();
  assert.deepEqual(
    store
      .load('run-1')
      .map((c) => c.name)
      .sort(),
    ['sid', 'step'],
  );
  // Turned off, the session is gone; the flusher has nothing to write for it.
  run.update({ ...settings, sessionCookies: false });
  flusher.flush();
  flusher.forget('run-1');
  assert.deepEqual(store.load('run-1'), []);
  flusher.close();
  store.close();
});

test('a write that fails leaves its changes for the next one; a cancelled run is not written', () => {
  const written: [string, string[]][] = [];
  let failing = true;
  const store = {
    write: (runId: string, changes: ReadonlyMap<string, unknown>) => {
      if (failing) throw Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' });
      written.push([runId, [...changes.keys()]]);
    },
    forget: () => undefined,
    load: () => [],
  } as unknown as SessionStore;
  const session = new CookieSession();
  const runs = [
    { runId: 'live', state: 'active', cookies: session },
    { runId: 'gone', state: 'cancelled', cookies: new CookieSession() },
  ] as unknown as HostedRun[];
  runs[1]?.cookies?.merge([cookie('x', 'c.test')]);
  const flusher = new SessionFlusher({ store, runs: () => runs, logger: silentLogger() });
  session.merge([cookie('a', 'a.test')]);
  flusher.flush();
  assert.deepEqual(written, []);
  failing = false;
  session.merge([cookie('b', 'b.test')]);
  flusher.flush();
  assert.deepEqual(written, [['live', ['a.test', 'b.test']]]);
  flusher.flush();
  assert.equal(written.length, 1, 'nothing new: nothing written');
});
