import { AppError, StorageError } from '../../errors.js';
import type { MigrationReport } from '../../ports/sql-store.js';
import type { SqlDriver } from './driver.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import type { Statements } from './statements.js';

/**
 * Applies what `ackcrawl_schema_version` does not list yet, in one transaction under the schema
 * lock (see SqlDriver.migrationTransaction): a second process starting at the same moment waits,
 * then finds the schema current. A database newer than this build is refused (SQL_SCHEMA_NEWER);
 * a migration that fails is rolled back whole (SQL_MIGRATION_FAILED, naming its version), except
 * that an unreachable or refusing database keeps its own retriable or auth code.
 */
export async function migrate(
  driver: SqlDriver,
  sql: Statements,
  now: () => number,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrationReport> {
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  let running: Migration | undefined;
  try {
    return await driver.migrationTransaction(async (s) => {
      await s.run(sql.versionTable);
      const done = new Set((await s.all(sql.versionSelect)).map((r) => Number(r.version)));
      const current = Math.max(0, ...done);
      if (current > latest) {
        throw new StorageError(
          'SQL_SCHEMA_NEWER',
          `sql store (${driver.dialect}): the database has schema version ${current}, this build knows up to ${latest}`,
          { details: { dialect: driver.dialect, version: current, latest } },
        );
      }
      const applied: number[] = [];
      for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(migration.version)) continue;
        running = migration;
        for (const statement of migration.statements[driver.dialect]) await s.run(statement);
        await s.run(sql.versionInsert, [migration.version, migration.description, now()]);
        applied.push(migration.version);
      }
      running = undefined;
      return { version: Math.max(current, ...applied), applied };
    });
  } catch (err) {
    if (err instanceof AppError && err.code === 'SQL_SCHEMA_NEWER') throw err;
    const mapped = driver.toError(err, 'migrate');
    if (mapped.retriable || ['SQL_AUTH', 'SQL_CLOSED', 'SQL_CORRUPT'].includes(mapped.code)) throw mapped;
    const which = running
      ? `migration ${running.version} (${running.description})`
      : 'reading the schema version';
    throw new StorageError(
      'SQL_MIGRATION_FAILED',
      `sql store (${driver.dialect}): ${which} failed and was rolled back: ${mapped.message}`,
      {
        cause: mapped,
        details: { dialect: driver.dialect, ...(running ? { version: running.version } : {}) },
      },
    );
  }
}
