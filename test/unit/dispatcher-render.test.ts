import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Dispatcher, type CrawlerSession } from '../../scheduler/dispatch/dispatcher.js';
import { renderPredicate } from '../../scheduler/dispatch/render-rule.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { RenderRules } from '../../shared/protocol/render-rules.js';
import type { WireTask } from '../../shared/protocol/messages.js';
import type { Lease, TaskKind } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';

let seq = 0;
function lease(host: string, kind?: TaskKind): Lease {
  seq += 1;
  return {
    runId: 'default',
    taskId: `t${seq}`,
    leaseId: `l${seq}`,
    url: `https://${host}/${seq}`,
    host,
    depth: 0,
    priority: 0,
    parentUrl: null,
    attempt: 1,
    lastError: null,
    ...(kind ? { kind } : {}),
  };
}

/** A frontier that hands out the given leases once, then nothing. */
function onceFrontier(leases: Lease[]): Frontier {
  let given = false;
  return {
    lease: async () => (given ? [] : ((given = true), leases)),
    release: async () => undefined,
    renew: async () => undefined,
  } as unknown as Frontier;
}

function session(id: string, credit: number, canRender: boolean): CrawlerSession & { got: WireTask[] } {
  const got: WireTask[] = [];
  return { id, credit, canRender, got, sendTasks: (tasks) => got.push(...tasks) };
}

function dispatcher(leases: Lease[], rules: Partial<RenderRules>): Dispatcher {
  const needsRender = renderPredicate(rules);
  return new Dispatcher({
    frontier: onceFrontier(leases),
    gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 100, delayMs: 0 }),
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 100,
    perHostBuffer: 100,
    needsRender: () => needsRender,
  });
}

const hostsOf = (tasks: WireTask[]): string[] => tasks.map((t) => new URL(t.url).host);

describe('dispatching tasks that need rendering', () => {
  test('render tasks never go to a static crawler, and static tasks flow past them', async () => {
    // The render host comes first in the buffer: a static crawler must skip it, not stall on it.
    const leases = [lease('js.test'), lease('js.test'), lease('js.test'), lease('a.test'), lease('a.test')];
    const d = dispatcher(leases, { renderHosts: ['js.test'] });
    const plain = session('static', 10, false);
    d.addSession(plain);
    d.pump();
    await waitFor(() => plain.got.length === 2, { timeoutMs: 2000, message: 'static tasks sent' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(hostsOf(plain.got), ['a.test', 'a.test']);
    assert.ok(plain.got.every((t) => t.render === undefined));
    assert.equal(d.bufferedCount, 3, 'the render tasks wait for a renderer');
    assert.equal(plain.credit, 8, 'credit is spent only on what was sent');

    const renderer = session('render', 10, true);
    d.addSession(renderer);
    d.pump();
    assert.deepEqual(hostsOf(renderer.got), ['js.test', 'js.test', 'js.test']);
    assert.ok(
      renderer.got.every((t) => t.render === true),
      'render tasks carry render: true',
    );
    assert.deepEqual(hostsOf(plain.got), ['a.test', 'a.test'], 'nothing more for the static crawler');
    await d.close();
  });

  test('a render crawler renders first, then helps with static work (without the flag)', async () => {
    const leases = [lease('a.test'), lease('a.test'), lease('js.test'), lease('js.test')];
    const d = dispatcher(leases, { renderHosts: ['js.test'] });
    const renderer = session('render', 2, true);
    d.addSession(renderer);
    d.pump();
    await waitFor(() => renderer.got.length === 2, { timeoutMs: 2000, message: 'first tasks sent' });
    assert.deepEqual(hostsOf(renderer.got), ['js.test', 'js.test']);
    renderer.credit = 2;
    d.pump();
    assert.deepEqual(hostsOf(renderer.got.slice(2)), ['a.test', 'a.test']);
    assert.ok(
      renderer.got.slice(2).every((t) => t.render === undefined),
      'static tasks are fetched',
    );
    await d.close();
  });

  test('render: always sends every page to renderers, but sitemaps to anyone', async () => {
    const leases = [lease('a.test'), lease('b.test', 'sitemap'), lease('c.test')];
    const d = dispatcher(leases, { render: 'always' });
    const plain = session('static', 10, false);
    d.addSession(plain);
    d.pump();
    await waitFor(() => plain.got.length === 1, { timeoutMs: 2000, message: 'the sitemap sent' });
    assert.deepEqual(hostsOf(plain.got), ['b.test']);
    const renderer = session('render', 10, true);
    d.addSession(renderer);
    d.pump();
    assert.deepEqual(hostsOf(renderer.got).sort(), ['a.test', 'c.test']);
    assert.ok(renderer.got.every((t) => t.render === true));
    await d.close();
  });

  test('with no render rules nothing is flagged and every crawler takes anything', async () => {
    const leases = [lease('a.test'), lease('b.test')];
    const d = dispatcher(leases, { render: 'never', renderHosts: [] });
    const plain = session('static', 10, false);
    d.addSession(plain);
    d.pump();
    await waitFor(() => plain.got.length === 2, { timeoutMs: 2000, message: 'both sent' });
    assert.ok(plain.got.every((t) => t.render === undefined));
    await d.close();
  });
});

describe('tasks no connected crawler can take', () => {
  test('do not count as buffered work: the frontier is asked for other hosts, and static work flows', async () => {
    const render = Array.from({ length: 8 }, () => lease('js.test'));
    const plain = Array.from({ length: 4 }, () => lease('a.test'));
    const asked: { max: number; exclude: readonly string[]; wait: number | null }[] = [];
    const frontier = {
      lease: async (
        max: number,
        options: { excludeHosts?: readonly string[]; hostWaitMs?: (h: string) => number },
      ) => {
        const exclude = options.excludeHosts ?? [];
        asked.push({
          max,
          exclude,
          wait: exclude.includes('js.test') ? (options.hostWaitMs?.('js.test') ?? null) : null,
        });
        if (asked.length === 1) return render.splice(0, max);
        return exclude.includes('a.test') ? [] : plain.splice(0, max);
      },
      release: async () => undefined,
      renew: async () => undefined,
    } as unknown as Frontier;
    const needsRender = renderPredicate({ renderHosts: ['js.test'] });
    const d = new Dispatcher({
      frontier,
      gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 100, delayMs: 0 }),
      logger: silentLogger(),
      clock: Date.now,
      leaseMs: 60_000,
      bufferSize: 8,
      perHostBuffer: 100,
      needsRender: () => needsRender,
    });
    const crawler = session('static', 10, false);
    d.addSession(crawler);
    d.pump();
    await waitFor(() => crawler.got.length === 4, {
      timeoutMs: 2000,
      message: 'static tasks behind a full buffer of render tasks',
    });
    assert.deepEqual(new Set(hostsOf(crawler.got)), new Set(['a.test']));
    const second = asked[1];
    assert.ok(second, 'the frontier was asked again although 8 tasks sat in an 8-task buffer');
    assert.ok(second.exclude.includes('js.test'), 'and told to skip the host no crawler can take');
    assert.equal(second.wait, 60_000, 'which it may set aside for a minute');
    assert.ok(d.bufferedCount <= 16, 'the buffer stays bounded (2 × its size)');
  });
});
