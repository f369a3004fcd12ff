import type { JobRepository, JobRow, Page, PageQuery } from '../../../ports/sql-store.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import { KEY_LENGTHS } from '../migrations.js';
import { toJob } from '../rows.js';
import { json, key, limitOf, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'jobs';

export function jobRepository(ctx: StoreContext): JobRepository {
  const { driver, sql, guard } = ctx;
  return {
    create: (job) =>
      guard('jobs.create', async () => {
        const settings = json(job.settings);
        await driver.run(sql.jobInsert, [
          key('id', job.id),
          key('name', job.name, KEY_LENGTHS.name),
          settings,
          whole('createdAt', job.createdAt),
          whole('updatedAt', job.updatedAt),
        ]);
        return { ...job, settings: JSON.parse(settings) as unknown };
      }),

    get: (id) =>
      guard('jobs.get', async () => {
        const [row] = await driver.all(sql.jobGet, [id]);
        return row === undefined ? null : toJob(row);
      }),

    list: (query?: PageQuery): Promise<Page<JobRow>> =>
      guard('jobs.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.jobList, [at, id, limit + 1]);
        return toPage(rows, limit, toJob, (j) => encodeCursor(LIST, [j.createdAt, j.id]));
      }),

    update: (id, patch) =>
      guard('jobs.update', () =>
        driver.transaction(async (s) => {
          const name = patch.name === undefined ? null : key('name', patch.name, KEY_LENGTHS.name);
          const settings = patch.settings === undefined ? null : json(patch.settings);
          const changed = await s.run(sql.jobUpdate, [
            id,
            name === null ? 0 : 1,
            name,
            settings === null ? 0 : 1,
            settings,
            whole('updatedAt', patch.updatedAt),
          ]);
          if (changed === 0) return null;
          const [row] = await s.all(sql.jobGet, [id]);
          return row === undefined ? null : toJob(row);
        }),
      ),

    delete: (id) => guard('jobs.delete', async () => (await driver.run(sql.jobDelete, [id])) > 0),
  };
}
