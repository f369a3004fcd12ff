import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import sql from 'mssql';
import { classifyMssqlError } from '../../shared/adapters/sql-store/mssql-errors.js';
import { classifyPostgresError } from '../../shared/adapters/sql-store/postgres-errors.js';
import { classifySqliteError } from '../../shared/adapters/sql-store/sqlite-errors.js';
import { sqlError } from '../../shared/adapters/sql-store/errors.js';

/** mssql's own error classes, shaped as the driver throws them (see mssql's lib/error). */
function requestError(number: number, message: string): sql.RequestError {
  const err = new sql.RequestError(message, 'EREQUEST');
  err.number = number;
  return err;
}

describe('SQL error classification', () => {
  it('SQL Server: unique violations are conflicts naming the field, never the duplicate value', () => {
    const unique = requestError(
      2627,
      "Violation of UNIQUE KEY constraint 'jobs_name_key'. Cannot insert duplicate key in object 'dbo.jobs'. The duplicate key value is (secret-name).",
    );
    assert.deepEqual(classifyMssqlError(unique), {
      kind: 'conflict',
      driverCode: 'mssql 2627',
      field: 'name',
    });
    const pk = requestError(
      2627,
      "Violation of PRIMARY KEY constraint 'results_pkey'. Cannot insert duplicate key in object 'dbo.results'. The duplicate key value is (c1).",
    );
    assert.equal(classifyMssqlError(pk).field, 'captureId');
    const index = requestError(
      2601,
      "Cannot insert duplicate key row in object 'dbo.tokens' with unique index 'tokens_hash_key'. The duplicate key value is (abc).",
    );
    assert.equal(classifyMssqlError(index).field, 'hash');
    const e = sqlError('mssql', 'jobs.create', classifyMssqlError(unique), unique);
    assert.equal(e.code, 'SQL_CONFLICT');
    assert.equal(e.status, 409);
    assert.doesNotMatch(e.message, /secret-name/);
  });

  it('SQL Server: deadlocks and lock timeouts are busy; logins are auth; lost connections unavailable', () => {
    assert.equal(classifyMssqlError(requestError(1205, 'deadlock victim')).kind, 'busy');
    assert.equal(classifyMssqlError(requestError(1222, 'lock request time out')).kind, 'busy');
    assert.equal(classifyMssqlError(requestError(18456, "Login failed for user 'sa'.")).kind, 'auth');
    assert.equal(
      classifyMssqlError(requestError(8152, 'String or binary data would be truncated.')).kind,
      'invalid',
    );
    assert.equal(classifyMssqlError(requestError(207, "Invalid column name 'x'.")).kind, 'query');
    assert.equal(
      classifyMssqlError(new sql.ConnectionError("Login failed for user 'sa'.", 'ELOGIN')).kind,
      'auth',
    );
    for (const code of ['ESOCKET', 'ETIMEOUT', 'ECONNCLOSED', 'EINSTLOOKUP'] as const) {
      assert.deepEqual(classifyMssqlError(new sql.ConnectionError('lost', code)), {
        kind: 'unavailable',
        driverCode: code,
      });
    }
    const aborted = new sql.TransactionError('Transaction has been aborted.', 'EABORT');
    aborted.originalError = requestError(1205, 'deadlock victim');
    assert.equal(classifyMssqlError(aborted).kind, 'busy');
  });

  it('PostgreSQL: SQLSTATEs and socket errors', () => {
    assert.deepEqual(
      classifyPostgresError(Object.assign(new Error('dup'), { code: '23505', constraint: 'jobs_pkey' })),
      {
        kind: 'conflict',
        driverCode: 'SQLSTATE 23505',
        field: 'id',
      },
    );
    assert.equal(classifyPostgresError(Object.assign(new Error('x'), { code: '40P01' })).kind, 'busy');
    assert.equal(classifyPostgresError(Object.assign(new Error('x'), { code: '57P01' })).kind, 'unavailable');
    assert.equal(classifyPostgresError(Object.assign(new Error('x'), { code: '42P01' })).kind, 'query');
    assert.equal(
      classifyPostgresError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).kind,
      'unavailable',
    );
    assert.equal(classifyPostgresError(new Error('Connection terminated unexpectedly')).kind, 'unavailable');
    const both = new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })], 'all failed');
    assert.equal(classifyPostgresError(both).kind, 'unavailable');
    assert.equal(
      classifyPostgresError(Object.assign(new Error('self-signed'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }))
        .kind,
      'auth',
    );
  });

  it('SQLite: extended result codes', () => {
    const err = (code: string, message: string): Error => new Database.SqliteError(message, code);
    assert.deepEqual(
      classifySqliteError(err('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed: tokens.hash')),
      {
        kind: 'conflict',
        driverCode: 'SQLITE_CONSTRAINT_UNIQUE',
        field: 'hash',
      },
    );
    assert.equal(classifySqliteError(err('SQLITE_BUSY_SNAPSHOT', 'busy')).kind, 'busy');
    assert.equal(classifySqliteError(err('SQLITE_FULL', 'full')).kind, 'unavailable');
    assert.equal(classifySqliteError(err('SQLITE_IOERR_WRITE', 'io')).kind, 'unavailable');
    assert.equal(classifySqliteError(err('SQLITE_NOTADB', 'not a db')).kind, 'corrupt');
    assert.equal(classifySqliteError(err('SQLITE_ERROR', 'no such table')).kind, 'query');
  });
});
