import assert from 'node:assert/strict';
import { test } from 'node:test';
import { edgeRates } from '../../scripts/bench/rate-sampler.js';
import { redirectCost } from '../../scripts/bench/redirect-cost.js';
import {
  addRatios,
  machineLoad,
  skippedResult,
  targetVerdicts,
  type RunnerResult,
} from '../../scripts/bench/report.js';

const row = (
  runner: string,
  kind: RunnerResult['kind'],
  pagesPerSecond: number,
  more: Partial<RunnerResult> = {},
) =>
  ({
    ...skippedResult({ name: runner, kind }),
    status: 'ok',
    pagesPerSecond,
    peakRssMb: 300,
    ...more,
  }) as RunnerResult;

test('the bench holds each run to the targets: ratios in the same run, and peak memory', () => {
  const cluster = { crawlerProcesses: 2 } as RunnerResult['cluster'];
  const results = [
    row('ackcrawl', 'ackcrawl', 2_000, { peakRssMb: 450 }),
    row('ackcrawl-cluster', 'ackcrawl', 1_700, { cluster }),
    row('crawlee', 'crawlee', 200),
    row('bare', 'bare', 2_500),
  ];
  addRatios(results);
  const byName = new Map(targetVerdicts(results).map((t) => [t.name, t]));
  assert.equal(byName.get('embedded / bare')?.value, 0.8);
  assert.equal(byName.get('embedded / bare')?.holds, false);
  assert.equal(byName.get('embedded / Crawlee')?.value, 10);
  assert.equal(byName.get('embedded / Crawlee')?.holds, true);
  assert.equal(byName.get('distributed / embedded')?.value, 0.85);
  assert.equal(byName.get('distributed / embedded')?.holds, false);
  assert.equal(byName.get('ackcrawl peak RSS')?.holds, false, '450 MB is over 400');
  assert.equal(byName.get('ackcrawl-cluster peak RSS')?.holds, true);
  assert.match(byName.get('embedded / bare')?.text ?? '', /0\.8x \(target >= 1x\): does NOT hold/);
});

test('a target whose runs were not asked for is left out; one whose run failed is "not measured"', () => {
  const failed = { ...row('ackcrawl', 'ackcrawl', 0), status: 'failed' } as RunnerResult;
  const results = [failed, row('bare', 'bare', 2_500)];
  addRatios(results);
  const verdicts = targetVerdicts(results);
  assert.deepEqual(
    verdicts.map((t) => t.name),
    ['embedded / bare', 'ackcrawl peak RSS'],
  );
  assert.ok(verdicts.every((t) => t.value === null && !t.holds));
  assert.match(verdicts[0]?.text ?? '', /not measured/);
});

test('pages/s at the start and the end of a run, from the site counters sampled during it', () => {
  const samples = [
    { atMs: 500, pages: 0 },
    { atMs: 1_000, pages: 100 },
    { atMs: 2_000, pages: 1_100 },
    { atMs: 3_000, pages: 2_100 },
    { atMs: 8_000, pages: 8_600 },
    { atMs: 9_000, pages: 9_100 },
    { atMs: 10_000, pages: 9_600 },
    { atMs: 11_000, pages: 10_000 },
  ];
  // Start: 100 → 1,100 pages in 1 s (start-up before the first page left out). End: from the last sample at or below 9,000 pages (8,600) to 10,000: 1,400 in 3 s.
  assert.deepEqual(edgeRates(samples, 10_000), { start: 1_000, end: 467 });
  assert.deepEqual(edgeRates([{ atMs: 500, pages: 0 }], 10_000), { start: null, end: null });
});

test("a run's cost to the machine adds the tree, the services and the site, against the cores", () => {
  const cluster = { crawlerProcesses: 2, servicesCpuSeconds: 6 } as RunnerResult['cluster'];
  const distributed = row('ackcrawl-cluster', 'ackcrawl', 1_200, {
    cluster,
    cpuSeconds: 25,
    seconds: 16,
    siteCpuSeconds: 3,
  });
  assert.equal(
    machineLoad(distributed, 2),
    "ackcrawl-cluster: the machine's CPU while it ran: tree 25.0 + services 6.0 + site 3.0 = 34.0 CPU-s in 16.0 s, 2.13 of 2 cores",
  );
  const embedded = row('ackcrawl', 'ackcrawl', 1_700, { cpuSeconds: 19, seconds: 12, siteCpuSeconds: 4 });
  assert.match(
    machineLoad(embedded, 2) ?? '',
    /tree 19\.0 \+ site 4\.0 = 23\.0 CPU-s in 12\.0 s, 1\.92 of 2 cores/,
  );
  assert.equal(
    machineLoad(row('bare', 'bare', 900, { seconds: 10 }), 2),
    null,
    'no site CPU read: nothing to say',
  );
  assert.equal(machineLoad({ ...embedded, status: 'failed' }, 2), null);
});

test('a --redirects run: the speed ratio and the CPU per hop of asking the scheduler for each redirect', () => {
  const asking = row('ackcrawl', 'ackcrawl', 1_500, { cpuSeconds: 24, siteRedirects: 19_999 });
  const silent = row('ackcrawl --no-robots', 'ackcrawl', 1_600, { cpuSeconds: 22 });
  const cost = redirectCost([asking, silent]);
  assert.ok(cost);
  assert.equal(cost.hops, 19_999);
  assert.equal(cost.speedRatio, 0.94);
  assert.equal(cost.cpuMicrosPerHop, 100);
  assert.match(cost.text, /19999 same-host 301s.*0\.94x the speed, 100 µs of CPU per hop/);
  // A failed run, or no redirects served: nothing to compare.
  assert.equal(redirectCost([asking, { ...silent, status: 'failed' }]), null);
  assert.equal(redirectCost([{ ...asking, siteRedirects: 0 }, silent]), null);
});
