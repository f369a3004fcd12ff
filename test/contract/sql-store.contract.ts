import { after, before, describe, it } from 'node:test';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { OpenSqlStoreOptions } from '../../shared/adapters/sql-store/open.js';
import { alertCases } from './sql-store/alerts.cases.js';
import { agentCases } from './sql-store/agents.cases.js';
import { jobCases } from './sql-store/jobs.cases.js';
import { extractCases } from './sql-store/extract.cases.js';
import { logAndResultCases } from './sql-store/logs-results.cases.js';
import { runCases } from './sql-store/runs.cases.js';
import { scheduleCases } from './sql-store/schedules.cases.js';
import { schemaCases } from './sql-store/schema.cases.js';
import { seenCases } from './sql-store/seen.cases.js';
import { tokenCases } from './sql-store/tokens.cases.js';

/** One empty database (a SQLite file, a PostgreSQL schema, a SQL Server database). */
export interface SqlStoreTarget {
  /** A new store (its own connection or pool) on this database; migrated unless told not to. */
  open(options?: Pick<OpenSqlStoreOptions, 'migrate' | 'migrations'>): Promise<SqlStore>;
}

/** What an adapter's test file provides: fresh databases, and a teardown after the suite. */
export interface SqlStoreHarness {
  fresh(): Promise<SqlStoreTarget>;
  teardown(): Promise<void>;
}

export interface CaseContext {
  store: SqlStore;
  target: SqlStoreTarget;
  /** Opens another store on the same database, closed after the case. */
  another(options?: Pick<OpenSqlStoreOptions, 'migrate' | 'migrations'>): Promise<SqlStore>;
  /** Another empty database; stores opened on it with `open` are the case's to close. */
  fresh(): Promise<SqlStoreTarget>;
}

/** Declares one case: a fresh database and a migrated store per case, closed whatever happens. */
export type DefineCase = (title: string, body: (ctx: CaseContext) => Promise<void>) => void;

/**
 * The SqlStore port's contract (shared/ports/sql-store.ts), run over every adapter. `skip`, when
 * given, is why this adapter cannot run here: the suite shows as skipped with that reason.
 */
export function sqlStoreContract(
  name: string,
  makeHarness: () => Promise<SqlStoreHarness>,
  options: { skip?: string } = {},
): void {
  if (options.skip !== undefined) {
    // One skipped test, so the run's summary counts it (a skipped describe counts as a pass).
    it(`${name}: sql store contract`, { skip: options.skip }, () => undefined);
    return;
  }
  describe(`${name}: sql store contract`, () => {
    let harness: SqlStoreHarness | undefined;
    before(async () => {
      harness = await makeHarness();
    });
    after(async () => {
      await harness?.teardown();
    });

    const define: DefineCase = (title, body) => {
      it(title, async () => {
        if (!harness) throw new Error('the harness did not start');
        const target = await harness.fresh();
        const opened: SqlStore[] = [];
        const another = async (
          o?: Pick<OpenSqlStoreOptions, 'migrate' | 'migrations'>,
        ): Promise<SqlStore> => {
          const s = await target.open(o);
          opened.push(s);
          return s;
        };
        try {
          const store = await another();
          const fresh = (): Promise<SqlStoreTarget> => {
            if (!harness) throw new Error('the harness did not start');
            return harness.fresh();
          };
          await body({ store, target, another, fresh });
        } finally {
          await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
        }
      });
    };

    schemaCases(define);
    jobCases(define);
    runCases(define);
    logAndResultCases(define);
    extractCases(define);
    tokenCases(define);
    alertCases(define);
    agentCases(define);
    scheduleCases(define);
    seenCases(define);
  });
}
