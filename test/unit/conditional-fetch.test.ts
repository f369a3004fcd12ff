import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAgents, type Agents } from '../../client/crawler/fetch/agents.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import type { FetchSettings, WireTask } from '../../shared/protocol/messages.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { pageRecordSchema } from '../../shared/protocol/page-record.js';
import { startConditionalSite, type ConditionalSite } from '../helpers/conditional-site.js';

const settings: FetchSettings = {
  userAgent: 'ackcrawl-test/1',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 2_000,
  totalTimeoutMs: 5_000,
  maxRedirects: 3,
  maxBodyBytes: 64 * 1024,
  allowPrivate: true,
};

describe('conditional fetches against a local server that honours them', () => {
  let site: ConditionalSite;
  let agents: Agents;
  let fetcher: Fetcher;

  before(async () => {
    site = await startConditionalSite({ '/p': ['/q'] });
    agents = createAgents({ allowPrivate: true });
    fetcher = new Fetcher(settings, agents);
  });
  after(async () => {
    agents.http.destroy();
    agents.https.destroy();
    await site.close();
  });

  const run = async (task: Partial<WireTask>) => {
    const frame = await processTask(
      { taskId: 't', url: `${site.url}p`, depth: 0, attempt: 1, parentUrl: null, ...task },
      { fetcher, crawlerId: 'c' },
    );
    const { header, record } = decodeOutcomeFrame(frame);
    return { header, record: pageRecordSchema.parse(JSON.parse(record.toString('utf8'))) };
  };

  test('a full fetch, then the same page with its validators: 304, not-modified; after a change: 200', async () => {
    const full = await run({ captureId: 'c1' });
    assert.equal(full.record.outcome, 'ok');
    const validators = full.header.validators;
    assert.ok(validators?.etag && validators.lastModified, JSON.stringify(full.header));
    assert.equal(site.count({ conditional: false }), 1);

    const again = await run({ captureId: 'c2', validators: { ...validators, captureId: 'c1' } });
    assert.equal(again.record.outcome, 'not-modified');
    assert.equal(again.record.status, 304);
    assert.equal(again.record.body, null);
    assert.equal(again.record.previousCaptureId, 'c1');
    const [asked] = site.requests.slice(-1);
    assert.equal(asked?.ifNoneMatch, validators.etag);
    assert.equal(asked?.ifModifiedSince, validators.lastModified);

    // Only Last-Modified known: If-Modified-Since alone decides.
    const dated = await run({ validators: { lastModified: validators.lastModified, captureId: 'c1' } });
    assert.equal(dated.record.outcome, 'not-modified');
    assert.equal(site.requests.at(-1)?.ifNoneMatch, null);

    site.change('/p');
    const changed = await run({ captureId: 'c3', validators: { ...validators, captureId: 'c1' } });
    assert.equal(changed.record.outcome, 'ok');
    assert.equal(changed.record.status, 200);
    assert.ok(changed.record.body?.includes('/p v2'));
    assert.notEqual(changed.header.validators?.etag, validators.etag);
    assert.deepEqual(changed.header.links, [`${site.url}q`]);
  });
});
