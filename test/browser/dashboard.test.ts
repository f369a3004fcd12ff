import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import {
  DESKTOP,
  PHONE,
  launchChromium,
  openPage,
  screenshot,
  testOutputDir,
  type WatchedPage,
} from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { isAlive } from '../helpers/process-tree.js';
import {
  killTree,
  masterApi,
  printedAdminToken,
  startServe,
  stopServe,
  type ServeRun,
} from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';

/** Enough pages that the run is still going when the tests pause it. */
const PAGES = 6_000;

interface ProcessView {
  slot: number;
  pid: number | null;
  state: string;
}
interface AgentView {
  id: string;
  state: string;
  processes: ProcessView[];
}

/** The number a `data-field` cell shows ("1,234" → 1234). */
function numberIn(text: string | null): number {
  const digits = (text ?? '').replace(/[^\d.]/g, '');
  return digits === '' ? NaN : Number(digits);
}

/**
 * The dashboard in Debian's Chromium, against `ackcrawl serve` crawling a local site: what a person
 * sees and does, and what the crawl does then. Screenshots of every page go to
 * test-output/dashboard/ (desktop and phone widths, light and dark).
 */
describe('dashboard in a browser', () => {
  let site: GeneratedSite;
  let serve: ServeRun;
  let dataDir: string;
  let baseUrl: string;
  let token: string;
  let api: ReturnType<typeof masterApi>;
  let browser: Browser;
  let watched: WatchedPage;
  let page: Page;
  let jobId: string;
  let runId: string;
  const shots = testOutputDir('dashboard');
  const pagesSeen: WatchedPage[] = [];
  let receiver: Server;

  before(async () => {
    // Broken links too (/missing answers 404, /error 500): the failures and the errors chart have data.
    site = await startGeneratedSite({
      pages: PAGES,
      linksPerPage: 8,
      pageBytes: 2_000,
      responseDelayMs: 40,
      brokenLinks: true,
    });
    dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-dashboard-'));
    serve = startServe(dataDir, {
      ACKCRAWL_MASTER_PORT: String(await freePort()),
      ACKCRAWL_LISTEN_PORT: String(await freePort()),
      ACKCRAWL_PROCESSES: '2',
      ACKCRAWL_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    baseUrl = await Promise.race([
      serve.masterUrl,
      serve.exited.then((exit) => {
        throw new Error(`serve exited (${exit.code ?? exit.signal}): ${serve.stderr()}`);
      }),
    ]);
    await waitFor(() => printedAdminToken(serve.stdout()) !== null, { message: 'admin token printed' });
    token = printedAdminToken(serve.stdout()) as string;
    api = masterApi(baseUrl, token);
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'local site',
      seeds: [site.url],
      allowPrivate: true,
      hostDelayMs: 0,
      hostConcurrency: 3,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    jobId = job.body.id;
    // Something for the alerts page to show: a rule and an endpoint (a receiver of this test's).
    receiver = createServer((req, res) => {
      req.resume();
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const rule = await api('POST', '/alert-rules', {
      name: 'crawler crash loop',
      kind: 'process.crash_loop',
    });
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    const hook = await api('POST', '/webhooks', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      description: 'on-call',
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    browser = await launchChromium();
    watched = await openPage(browser, { viewport: DESKTOP });
    pagesSeen.push(watched);
    page = watched.page;
  });

  after(async () => {
    if (runId) await api('POST', `/runs/${runId}/cancel`).catch(() => undefined);
    await browser?.close();
    if (serve) {
      await stopServe(serve).catch(() => killTree(serve));
    }
    await site?.close();
    receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const go = async (hash: string): Promise<void> => {
    await page.goto(`${baseUrl}/ui/#${hash}`);
  };
  const byId = (id: string) => page.getByTestId(id);

  test('login: a wrong token is refused with a message, the printed one opens the dashboard', async () => {
    await page.goto(`${baseUrl}/`);
    assert.match(page.url(), /\/ui\/$|\/ui\/#/);
    await byId('login-token').fill('ackp_not-a-real-token-at-all');
    await byId('login-submit').click();
    await byId('login-error').waitFor({ state: 'visible' });
    await screenshot(page, shots, 'login-refused-desktop');
    await byId('login-token').fill(token);
    await byId('login-submit').click();
    await byId('nav-overview').waitFor({ state: 'visible' });
    await waitFor(async () => /live/i.test((await byId('live-status').textContent()) ?? ''), {
      timeoutMs: 15_000,
      message: 'the live stream connects',
    });
  });

  test('a run started from the job page shows on the overview, and its numbers move', async () => {
    await go(`/jobs/${jobId}`);
    await byId('job-start-run').click();
    // The UI opens the new run's page once the API answers; only then go to the overview, or that
    // late navigation would take the page away from it.
    await page.waitForURL(/#\/runs\/[^/]+$/, { timeout: 15_000 });
    runId = decodeURIComponent(new URL(page.url()).hash.replace(/^#\/runs\//, ''));
    const runs = await api<{ items: { id: string }[] }>('GET', `/jobs/${jobId}/runs`);
    assert.deepEqual(
      runs.body.items.map((r) => r.id),
      [runId],
      'the job has one run, the one the UI opened',
    );
    await go('/');
    const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    const done = row.locator('[data-field="done"]');
    await waitFor(async () => numberIn(await done.textContent()) > 0, {
      timeoutMs: 30_000,
      message: async () => `the run's done count moves (shows ${await done.textContent()})`,
    });
    const first = numberIn(await done.textContent());
    await waitFor(async () => numberIn(await done.textContent()) >= first + 20, {
      timeoutMs: 30_000,
      message: async () =>
        `done grows past ${first + 20} without a reload (shows ${await done.textContent()})`,
    });
    assert.equal(await row.getAttribute('data-state'), 'running');
    // The page shows what the API says (within the stream's second or two).
    const shown = numberIn(await done.textContent());
    const fromApi = (await api<{ counters: { done: number } }>('GET', `/runs/${runId}`)).body.counters.done;
    assert.ok(fromApi >= shown, `the API (${fromApi}) is at or ahead of the page (${shown})`);
    await byId('chart-pages').locator('canvas').first().waitFor({ state: 'visible' });
    await byId('fleet-summary').waitFor({ state: 'visible' });
    await screenshot(page, shots, 'overview-desktop');
  });

  test('pausing the run in the UI stops requests to the site; resuming starts them again', async () => {
    await go(`/runs/${runId}`);
    await waitFor(async () => ((await byId('run-state').textContent()) ?? '').includes('running'), {
      timeoutMs: 15_000,
      message: 'the run page shows it running',
    });
    await byId('run-pause').click();
    await waitFor(async () => ((await byId('run-state').textContent()) ?? '').includes('paused'), {
      timeoutMs: 15_000,
      message: 'the run page shows it paused',
    });
    // What was in flight finishes; then the site hears nothing for a while.
    let last = site.stats().requests;
    let quietSince = Date.now();
    await waitFor(
      () => {
        const now = site.stats().requests;
        if (now !== last) {
          last = now;
          quietSince = Date.now();
        }
        return Date.now() - quietSince >= 3_000;
      },
      { timeoutMs: 20_000, intervalMs: 100, message: 'the site stops getting requests after the pause' },
    );
    const paused = site.stats().requests;
    await screenshot(page, shots, 'run-paused-desktop');
    assert.equal(await byId('run-pause').isDisabled(), true, 'a paused run cannot be paused again');
    await byId('run-resume').click();
    await waitFor(() => site.stats().requests > paused + 10, {
      timeoutMs: 20_000,
      message: 'requests start again after resume',
    });
    await waitFor(async () => ((await byId('run-state').textContent()) ?? '').includes('running'), {
      timeoutMs: 15_000,
      message: 'the run page shows it running again',
    });
  });

  test('the run page shows its settings, hosts, throughput and answers "why not yet?"', async () => {
    await go(`/runs/${runId}`);
    await waitFor(async () => ((await byId('run-settings').textContent()) ?? '').includes(site.url), {
      message: 'the settings name the seed',
    });
    await byId('chart-run').locator('canvas').first().waitFor({ state: 'visible' });
    await byId('hosts-table').locator('[data-testid="host-row"]').first().waitFor({ timeout: 15_000 });
    await byId('why-url').fill(`${site.url}page/999999`);
    await byId('why-submit').click();
    // The scheduler's answer, drawn (not "Asking…", not an error).
    await byId('why-answer').locator('[data-field="state"]').waitFor({ timeout: 15_000 });
    assert.ok(
      ((await byId('why-answer').locator('[data-field="reason"]').textContent()) ?? '').trim().length > 0,
    );
    // A final failure (the 404), retried from its row: the master takes it, the scheduler queues it.
    const failure = byId('failures-table').locator('[data-testid="failure-row"][data-final="true"]').first();
    await failure.waitFor({ timeout: 30_000 });
    const failureId = (await failure.getAttribute('data-failure-id')) as string;
    await failure.getByTestId('failure-retry').click();
    await waitFor(
      async () => /retried/i.test((await failure.locator('[data-field="final"]').textContent()) ?? ''),
      {
        timeoutMs: 15_000,
        message: 'the row says it was retried',
      },
    );
    type Failures = { items: { id: string; retriedAt: string | null; requeuedAt: string | null }[] };
    await waitFor(
      async () => {
        const all = (await api<Failures>('GET', `/runs/${runId}/failures?final=true`)).body.items;
        return all.some((f) => f.id === failureId && f.retriedAt !== null && f.requeuedAt !== null);
      },
      { timeoutMs: 20_000, message: 'the scheduler put the URL back into the run' },
    );
    await screenshot(page, shots, 'run-desktop');
  });

  test("the run page lists what ackcrawl extract cleaned of the run's pages, and downloads them as CSV", async () => {
    await go(`/runs/${runId}`);
    // The cleaner over serve's record files, into serve's own SQL store.
    const extracted = await runCli(
      ['extract', '--records', join(dataDir, 'crawl-output'), '--once'],
      { ACKCRAWL_DATA_DIR: dataDir },
      60_000,
    );
    assert.equal(extracted.code, 0, extracted.stderr);
    type Results = { items: { captureId: string }[]; next: string | null };
    const first = (await api<Results>('GET', `/runs/${runId}/results?limit=500`)).body;
    assert.ok(first.items.length > 0, 'the cleaner wrote rows for the run');
    const row = byId('results-table').locator('[data-testid="result-row"]').first();
    await row.waitFor({ timeout: 15_000 });
    assert.ok(((await row.locator('[data-field="title"]').textContent()) ?? '').trim().length > 0);
    const [download] = await Promise.all([page.waitForEvent('download'), byId('results-export-csv').click()]);
    assert.equal(download.suggestedFilename(), `run-${runId}-results.csv`);
    const csv = readFileSync((await download.path()) as string, 'utf8');
    assert.match(csv, /^capture_id,url,status,title,/);
    // Every result of the run is a row of the file (the file is read up to its last page).
    const ids = first.items.map((r) => r.captureId);
    for (let after = first.next; after !== null;) {
      const more: Results = (
        await api<Results>('GET', `/runs/${runId}/results?limit=500&after=${encodeURIComponent(after)}`)
      ).body;
      ids.push(...more.items.map((r) => r.captureId));
      after = more.next;
    }
    assert.deepEqual(
      ids.filter((id) => !csv.includes(`\n${id},`)),
      [],
      'every result in the CSV',
    );
  });

  test('creating a job with a bad field shows the error by that field, and nothing is made', async () => {
    const before = (await api<{ items: unknown[] }>('GET', '/jobs?limit=100')).body.items.length;
    await go('/jobs/new');
    await byId('job-form').waitFor({ state: 'visible' });
    await byId('field-name').fill('bad job');
    await byId('field-seeds').fill(site.url);
    await byId('field-maxPages').fill('-3');
    // A list box, one pattern a line: the second is no pattern RE2 takes.
    await byId('field-includeUrls').fill('/blog/\n(?<=a)b');
    await byId('job-save').click();
    const error = page.locator('[data-testid="field-error"][data-field="maxPages"]');
    await error.waitFor({ state: 'visible' });
    const patternError = page.locator('[data-testid="field-error"][data-field="includeUrls.1"]');
    await patternError.waitFor({ state: 'visible' });
    assert.match((await patternError.textContent()) ?? '', /RE2/);
    assert.ok(((await error.textContent()) ?? '').trim().length > 0, 'the error says something');
    // It stands by its field: right after the input, in the same form row.
    const input = await byId('field-maxPages').boundingBox();
    const box = await error.boundingBox();
    assert.ok(input && box, 'both are laid out');
    const placed = box.y >= input.y - 1 && box.y - (input.y + input.height) < 80;
    assert.equal(placed, true, 'the error is shown by the maxPages input');
    assert.equal(
      await page.locator('[data-testid="field-error"][data-field="name"]').count(),
      0,
      'no error by a good field',
    );
    await screenshot(page, shots, 'job-form-errors-desktop');
    assert.equal((await api<{ items: unknown[] }>('GET', '/jobs?limit=100')).body.items.length, before);
    // Mended, it saves, its lists one item a line.
    await byId('field-maxPages').fill('50');
    await byId('field-includeUrls').fill('/blog/\n/news/');
    await byId('field-stripQueryParams').fill('utm_*\nsessionid');
    await byId('job-save').click();
    await waitFor(
      async () => (await api<{ items: unknown[] }>('GET', '/jobs?limit=100')).body.items.length > before,
      {
        message: 'the mended job is saved',
      },
    );
    const saved = (
      await api<{ items: { name: string; settings: Record<string, unknown> }[] }>('GET', '/jobs?limit=100')
    ).body.items.find((job) => job.name === 'bad job');
    assert.deepEqual(saved?.settings.includeUrls, ['/blog/', '/news/']);
    assert.deepEqual(saved?.settings.stripQueryParams, ['utm_*', 'sessionid']);
    await page.locator('[data-testid="field-error"]').first().waitFor({ state: 'detached' });
    // The form goes to the job's page once its answer is in: later than the job is in the API, and
    // late enough to take the page away from the next test's /fleet (the fleet case failed so).
    await waitFor(() => !page.url().includes('/jobs/new'), {
      timeoutMs: 15_000,
      message: () => `the form went on to the job's page (${page.url()})`,
    });
  });

  test('the fleet page shows the crawler processes, and stopping one from the UI stops it', async () => {
    await go('/fleet');
    const card = page.locator('[data-testid="agent-card"]').first();
    await card.waitFor({ state: 'visible' });
    const rows = card.locator('[data-testid="process-row"]');
    await waitFor(async () => (await rows.count()) === 2, {
      timeoutMs: 15_000,
      // What the page shows, what the API says and what serve's roles said (a role restarted, a
      // crawler that would not start) tell why not.
      message: async () => {
        const shown = await page
          .locator('[data-testid="agent-card"]')
          .evaluateAll((cards) =>
            cards.map((c) => ({
              id: c.getAttribute('data-agent-id'),
              state: c.getAttribute('data-state'),
              rows: [...c.querySelectorAll('[data-testid="process-row"]')].map(
                (r) => `${r.getAttribute('data-slot')}:${r.getAttribute('data-state')}`,
              ),
            })),
          )
          .catch((err: unknown) => String(err));
        const fromApi = await api<{ items: AgentView[] }>('GET', '/agents')
          .then((r) => r.body.items.map((a) => ({ id: a.id, state: a.state, processes: a.processes })))
          .catch((err: unknown) => String(err));
        return (
          `two crawler processes shown; the page: ${JSON.stringify(shown)}; the API: ${JSON.stringify(fromApi)}; ` +
          `live: ${await byId('live-status').textContent()}; serve's log: ${serve.stderr().slice(-3_000)}`
        );
      },
    });
    const agents = (await api<{ items: AgentView[] }>('GET', '/agents')).body.items;
    const agent = agents.find((a) => a.state === 'online');
    assert.ok(agent, 'an online agent');
    const target = agent.processes.find((p) => p.slot === 1);
    assert.ok(target?.pid, 'slot 1 has a pid');
    const row = card.locator('[data-testid="process-row"][data-slot="1"]');
    assert.equal(numberIn(await row.locator('[data-field="pid"]').textContent()), target.pid);
    assert.equal(await row.getAttribute('data-state'), 'running');
    await screenshot(page, shots, 'fleet-desktop');
    await row.getByTestId('process-stop').click();
    const ok = page.getByTestId('confirm-ok');
    if (await ok.isVisible().catch(() => false)) await ok.click();
    await waitFor(() => !isAlive(target.pid as number), {
      timeoutMs: 45_000,
      message: `crawler ${target.pid} exits after Stop in the UI`,
    });
    await waitFor(async () => (await row.getAttribute('data-state')) === 'stopped', {
      timeoutMs: 15_000,
      message: async () => `the row shows it stopped (shows ${await row.getAttribute('data-state')})`,
    });
    const other = card.locator('[data-testid="process-row"][data-slot="0"]');
    assert.equal(await other.getAttribute('data-state'), 'running', 'the other crawler runs on');
    await screenshot(page, shots, 'fleet-stopped-desktop');
  });

  test('every page, at desktop and phone widths, light and dark: screenshots, no page-wide sideways scroll, no errors', async () => {
    // Each page, and an element that says it has drawn what it read.
    const routes: [string, string, string][] = [
      ['overview', '/', 'run-row'],
      ['run', `/runs/${runId}`, 'run-counters'],
      ['jobs', '/jobs', 'job-row'],
      ['job', `/jobs/${jobId}`, 'job-start-run'],
      ['job-new', '/jobs/new', 'job-form'],
      ['fleet', '/fleet', 'process-row'],
      ['alerts', '/alerts', 'rule-row'],
    ];
    for (const [viewport, width, scheme] of [
      ['desktop', DESKTOP, 'light'],
      ['desktop-dark', DESKTOP, 'dark'],
      ['phone', PHONE, 'light'],
      ['phone-dark', PHONE, 'dark'],
    ] as const) {
      const view = await openPage(browser, { viewport: width, colorScheme: scheme });
      pagesSeen.push(view);
      await view.page.goto(`${baseUrl}/ui/`);
      await view.page.getByTestId('login-token').fill(token);
      await view.page.getByTestId('login-submit').click();
      await view.page.getByTestId('nav-overview').waitFor({ state: 'visible' });
      for (const [name, hash, drawn] of routes) {
        await view.page.goto(`${baseUrl}/ui/#${hash}`);
        await view.page.getByTestId(drawn).first().waitFor({ state: 'visible', timeout: 15_000 });
        await view.page
          .getByTestId('page-error')
          .waitFor({ state: 'detached', timeout: 1_000 })
          .catch(() => {
            throw new Error(`${name} (${viewport}) shows a page error`);
          });
        const overflow = Number(
          await view.page.evaluate(
            'document.documentElement.scrollWidth - document.documentElement.clientWidth',
          ),
        );
        assert.ok(overflow <= 1, `${name} (${viewport}) scrolls sideways by ${overflow} px`);
        const file = await screenshot(view.page, shots, `${name}-${viewport}`);
        assert.ok(existsSync(file) && statSync(file).size > 5_000, `${file} is a real screenshot`);
      }
      await view.context.close();
    }
    const errors = pagesSeen.flatMap((p) => p.errors);
    assert.deepEqual(errors, [], 'no uncaught errors and no console errors in any page');
  });
});
