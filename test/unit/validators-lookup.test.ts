import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validatorsLookup } from '../../scheduler/recrawl/validators-lookup.js';
import type { HostedRun } from '../../scheduler/runs/hosted-run.js';
import { silentLogger } from '../../shared/logger.js';
import type { Lease } from '../../shared/protocol/task.js';
import { testJob } from '../helpers/test-job.js';

const lease = (more: Partial<Lease> = {}): Lease => ({
  runId: 'run-2',
  url: 'https://a.test/1',
  host: 'a.test',
  depth: 0,
  priority: 0,
  parentUrl: null,
  taskId: 't',
  leaseId: 'l',
  attempt: 1,
  lastError: null,
  ...more,
});

const known = { validators: { captureId: 'c1', etag: '"e"' }, links: [] };

function lookupWith(conditionalRequests: boolean, index = { lookup: () => known }) {
  const run = { jobId: 'job', settings: testJob(['https://a.test/'], { conditionalRequests }) } as HostedRun;
  const asked: string[] = [];
  const lookup = validatorsLookup(
    {
      lookup: (jobId, url) => {
        asked.push(`${jobId} ${url}`);
        return index.lookup();
      },
    },
    { get: (runId) => (runId === 'run-2' ? run : undefined) },
    silentLogger(),
  );
  return { lookup, asked };
}

describe('validatorsLookup', () => {
  test('a page task of a run with conditionalRequests gets its job’s validators for the URL', () => {
    const { lookup, asked } = lookupWith(true);
    assert.deepEqual(lookup(lease()), known.validators);
    assert.deepEqual(asked, ['job https://a.test/1']);
  });

  test('runs with it off, sitemap tasks and runs not hosted here are fetched in full', () => {
    assert.equal(lookupWith(false).lookup(lease()), null);
    assert.equal(lookupWith(true).lookup(lease({ kind: 'sitemap' })), null);
    assert.equal(lookupWith(true).lookup(lease({ runId: 'elsewhere' })), null);
  });

  test('an index that cannot be read means a full fetch, not a failure', () => {
    const { lookup } = lookupWith(true, {
      lookup: () => {
        throw new Error('disk I/O error');
      },
    });
    assert.equal(lookup(lease()), null);
  });
});
