import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startTestMaster, type TestMaster } from '../helpers/master-api.js';

describe('ackcrawl jobs schedule (the CLI of the schedule routes)', () => {
  let master: TestMaster;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    master = await startTestMaster();
    env = { ACKCRAWL_MASTER_URL: master.url, ACKCRAWL_TOKEN: master.adminToken };
  });
  after(() => master.close());

  const cli = (args: string[]) => runCli(['jobs', ...args], env, 30_000);

  test('set, show, pause, resume, fires, remove: tables for people, --json for scripts; bad input exits 2', async () => {
    const job = JSON.parse((await cli(['create', 'scheduled', 'https://a.example.test/', '--json'])).stdout);
    const set = await cli([
      'schedule',
      'set',
      job.id,
      '0 3 * * *',
      '--tz',
      'Asia/Tokyo',
      '--overlap',
      'queue',
    ]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^expression\s+0 3 \* \* \*$/m);
    assert.match(set.stdout, /^time zone\s+Asia\/Tokyo$/m);
    assert.match(set.stdout, /^overlap\s+queue$/m);
    // 03:00 in Tokyo is 18:00 UTC the day before.
    assert.match(set.stdout, /^next fires\s+\d{4}-\d\d-\d\d 18:00:00Z, /m);

    const shown = JSON.parse((await cli(['schedule', 'show', job.id, '--next', '2', '--json'])).stdout);
    assert.equal(shown.nextFireTimes.length, 2);
    assert.equal(shown.misfire, 'run-once');
    assert.match((await cli(['schedule', 'pause', job.id])).stdout, /^state\s+paused$/m);
    assert.match((await cli(['schedule', 'resume', job.id])).stdout, /^state\s+enabled$/m);
    assert.match((await cli(['schedule', 'fires', job.id])).stdout, /no fire times yet/);

    const bad = await cli(['schedule', 'set', job.id, '70 * * * *', '--tz', 'Moon/Base']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /INVALID_SCHEDULE/);
    assert.match(bad.stderr, /timeZone: 'Moon\/Base'/);
    assert.match(bad.stderr, /expression: minute/);

    assert.match((await cli(['schedule', 'remove', job.id])).stdout, /removed the schedule/);
    const gone = await cli(['schedule', 'show', job.id]);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /SCHEDULE_NOT_FOUND/);
  });
});
