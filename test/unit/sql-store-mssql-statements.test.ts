import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import nodeSqlParser from 'node-sql-parser';
import { MIGRATIONS } from '../../shared/adapters/sql-store/migrations.js';
import { MSSQL_ALERT_STATEMENTS } from '../../shared/adapters/sql-store/alert-statements.js';
import { MSSQL_SEEN_STATEMENTS, SEEN_CHUNK } from '../../shared/adapters/sql-store/seen-statements.js';
import { MSSQL_STATEMENTS, schemaLockAsTsql } from '../../shared/adapters/sql-store/mssql-statements.js';
import {
  LOG_INSERT_CHUNK,
  MAX_STATES,
  PROCESS_INSERT_CHUNK,
} from '../../shared/adapters/sql-store/statements.js';

const { Parser } = nodeSqlParser;
const parser = new Parser();

/**
 * Every T-SQL statement the SQL Server adapter can send, by name: the fixed ones, every variant
 * the generated ones take, the migrations, and the schema lock (sent as an RPC; parsed here as
 * the EXEC it stands for).
 */
function everyStatement(): [string, string][] {
  const all: [string, string][] = [];
  for (const [name, value] of Object.entries(MSSQL_STATEMENTS)) {
    if (name === 'alerts') continue;
    if (name === 'schedules') continue;
    if (name === 'seen') continue;
    if (Array.isArray(value)) value.forEach((sql: string, i) => all.push([`${name}.${i}`, sql]));
    else if (typeof value === 'string') all.push([name, value]);
    else if (typeof value === 'object' && value.kind === 'single') all.push([name, value.sql]);
    else if (typeof value === 'object')
      all.push([`${name}.update`, value.update], [`${name}.insert`, value.insert]);
  }
  for (const [name, value] of Object.entries(MSSQL_STATEMENTS.schedules))
    all.push([`schedules.${name}`, value]);
  for (const job of [false, true]) {
    for (let states = 0; states <= MAX_STATES; states += 1) {
      all.push([`runList(job=${job}, states=${states})`, MSSQL_STATEMENTS.runList({ job, states })]);
    }
  }
  for (let rows = 1; rows <= LOG_INSERT_CHUNK; rows += 1)
    all.push([`logInsert(${rows})`, MSSQL_STATEMENTS.logInsert(rows)]);
  for (let rows = 1; rows <= PROCESS_INSERT_CHUNK; rows += 1)
    all.push([`processInsert(${rows})`, MSSQL_STATEMENTS.processInsert(rows)]);
  for (let from = 1; from <= MAX_STATES; from += 1) {
    all.push([`runTransition(${from})`, MSSQL_STATEMENTS.runTransition(from)]);
    all.push([`runDelete(${from})`, MSSQL_STATEMENTS.runDelete(from)]);
  }
  for (const [name, value] of Object.entries(MSSQL_ALERT_STATEMENTS)) {
    if (typeof value === 'string') all.push([`alerts.${name}`, value]);
  }
  for (let states = 0; states <= MAX_STATES; states += 1)
    all.push([`alerts.alertList(states=${states})`, MSSQL_ALERT_STATEMENTS.alertList(states)]);
  const seen = MSSQL_SEEN_STATEMENTS;
  all.push(['seen.seenForget', seen.seenForget], ['seen.seenCount', seen.seenCount]);
  all.push(['seen.countsList', seen.countsList], ['seen.countsForget', seen.countsForget]);
  if (seen.countsUpsert.kind === 'update-then-insert')
    all.push(
      ['seen.countsUpdate', seen.countsUpsert.update],
      ['seen.countsInsert', seen.countsUpsert.insert],
    );
  for (const n of [1, 2, SEEN_CHUNK]) {
    all.push([`seen.seenKnown(${n})`, seen.seenKnown(n)]);
    if (seen.seenClaim.kind === 'lock-then-insert')
      all.push([`seen.lock(${n})`, seen.seenClaim.lock(n)], [`seen.insert(${n})`, seen.seenClaim.insert(n)]);
  }
  for (const m of MIGRATIONS)
    m.statements.mssql.forEach((s, i) => all.push([`migration ${m.version}.${i}`, s]));
  all.push(['schema lock', schemaLockAsTsql()]);
  return all;
}

/** The parser is lenient (it takes LIMIT, $1 and row values in transactsql), so these are checked too. */
const NOT_TSQL: [RegExp, string][] = [
  [/\bLIMIT\b/i, 'LIMIT (T-SQL pages with TOP or OFFSET … FETCH)'],
  [/\$\d/, '$n placeholders'],
  [/@p\d/i, '@pN parameters (the mssql driver keeps them for itself)'],
  [/\bON CONFLICT\b|\bexcluded\./i, 'ON CONFLICT upserts'],
  [/\bRETURNING\b/i, 'RETURNING'],
  [/\(\s*\w+\s*,\s*\w+\s*\)\s*[<>]/, 'row-value comparisons'],
  [/\bIF NOT EXISTS\b\s*\w/i, 'CREATE … IF NOT EXISTS'],
  [
    /\b(BOOLEAN|SERIAL|AUTOINCREMENT|GENERATED)\b|\bTEXT\b(?!\s*\))/i,
    'types T-SQL lacks (or deprecates: TEXT)',
  ],
  [/\bVARCHAR\(/, 'VARCHAR for text (NVARCHAR keeps unicode)'],
];

describe('SQL Server statements', () => {
  const statements = everyStatement();

  it('enumerates every statement kind the adapter has', () => {
    assert.ok(statements.length > 40, `only ${statements.length} statements`);
    for (const key of Object.keys(MSSQL_ALERT_STATEMENTS)) {
      assert.ok(
        statements.some(([name]) => name === `alerts.${key}` || name.startsWith(`alerts.${key}(`)),
        `alerts.${key} is not enumerated`,
      );
    }
    for (const key of Object.keys(MSSQL_STATEMENTS)) {
      if (key === 'alerts') continue;
      assert.ok(
        statements.some(([name]) => name === key || name.startsWith(`${key}.`) || name.startsWith(`${key}(`)),
        `${key} is not enumerated`,
      );
    }
  });

  for (const [name, sql] of statements) {
    it(`${name} parses as T-SQL and uses only T-SQL constructs`, () => {
      let ast: unknown;
      try {
        ast = parser.astify(sql, { database: 'transactsql' });
      } catch (err) {
        assert.fail(`${name} does not parse as T-SQL: ${(err as Error).message}\n${sql}`);
      }
      assert.ok(ast);
      for (const [pattern, what] of NOT_TSQL) {
        if (name === 'schema lock') continue;
        assert.doesNotMatch(sql, pattern, `${name} uses ${what}`);
      }
      // At most 2100 parameters per request; bound positionally as @v1…@vN, each one up to the highest used.
      const used = new Set([...sql.matchAll(/@v(\d+)\b/g)].map((m) => Number(m[1])));
      assert.ok(used.size <= 2_100, `${name} takes ${used.size} parameters`);
      const highest = Math.max(0, ...used);
      for (let n = 1; n <= highest; n += 1) assert.ok(used.has(n), `${name} skips @v${n}`);
    });
  }

  // node-sql-parser knows `TOP 5` but reads `TOP (@v3) id` as a call of a function named TOP,
  // aliased `id`: it parses, wrongly. So each paged SELECT is checked to start with exactly
  // `SELECT TOP (@vN) `, and the rest is parsed with a literal TOP, which the parser does read.
  it('every paged SELECT is `SELECT TOP (@vN) …` with an ORDER BY, so a page is deterministic', () => {
    const paged = statements.filter(([, sql]) => /\bTOP\b/.test(sql));
    assert.ok(paged.length >= 5);
    for (const [name, sql] of paged) {
      const top = /^SELECT TOP \(@v(\d+)\) /.exec(sql);
      assert.ok(top, `${name}: TOP must come first, as TOP (@vN)`);
      const literal = sql.replace(/^SELECT TOP \(@v\d+\) /, 'SELECT TOP 50 ');
      const ast = parser.astify(literal, { database: 'transactsql' }) as {
        top?: { value?: unknown };
        orderby?: unknown[] | null;
        columns?: unknown[];
      };
      assert.equal(ast.top?.value, 50, `${name}: TOP not read`);
      assert.ok(Array.isArray(ast.orderby) && ast.orderby.length > 0, `${name}: TOP without ORDER BY`);
      const listed = /^SELECT TOP 50 (.*?) FROM /.exec(literal)?.[1]?.split(',').length ?? 0;
      assert.ok(listed > 0 && ast.columns?.length === listed, `${name}: its column list was not read`);
    }
  });

  it('the upsert holds a key-range lock: UPDATE WITH (UPDLOCK, SERIALIZABLE), then INSERT', () => {
    const upsert = MSSQL_STATEMENTS.resultUpsert;
    assert.equal(upsert.kind, 'update-then-insert');
    if (upsert.kind !== 'update-then-insert') return;
    const ast = parser.astify(upsert.update, { database: 'transactsql' }) as {
      type: string;
      table: { table: string; table_hint?: unknown }[];
    };
    assert.equal(ast.type, 'update');
    assert.match(JSON.stringify(ast.table[0]?.table_hint), /UPDLOCK/i);
    assert.match(JSON.stringify(ast.table[0]?.table_hint), /SERIALIZABLE/i);
    assert.equal(
      (parser.astify(upsert.insert, { database: 'transactsql' }) as { type: string }).type,
      'insert',
    );
  });

  it('text columns compare exactly (binary collation) and JSON is NVARCHAR(MAX)', () => {
    const ddl = MIGRATIONS.flatMap((m) => m.statements.mssql).join('\n');
    assert.match(ddl, /settings NVARCHAR\(MAX\) NOT NULL/);
    assert.match(ddl, /data NVARCHAR\(MAX\) NOT NULL/);
    assert.match(ddl, /name NVARCHAR\(200\) COLLATE Latin1_General_100_BIN2 NOT NULL/);
    assert.doesNotMatch(ddl, /NVARCHAR\(\d+\)(?! COLLATE)/, 'every key column has the binary collation');
  });

  it("migration 5 adds the cleaner's columns with ADD (T-SQL has no ADD COLUMN) and a keyed failures table", () => {
    const v5 = MIGRATIONS.find((m) => m.version === 5);
    assert.ok(v5);
    const alters = v5.statements.mssql.filter((s) => s.startsWith('ALTER TABLE results ADD '));
    assert.deepEqual(
      alters.map((s) => s.split(' ')[4]),
      [
        'title',
        'author',
        'published_at',
        'language',
        'description',
        'canonical_url',
        'main_text',
        'fetched_at',
      ],
    );
    for (const statement of alters) {
      assert.doesNotMatch(statement, /ADD COLUMN/);
      assert.equal((parser.astify(statement, { database: 'transactsql' }) as { type: string }).type, 'alter');
    }
    const failures = v5.statements.mssql.find((s) => s.includes('CREATE TABLE extract_failures')) ?? '';
    // A clustered key holds at most 900 bytes: NVARCHAR(400) is 800.
    assert.match(failures, /source NVARCHAR\(400\) COLLATE Latin1_General_100_BIN2 NOT NULL/);
    assert.match(failures, /PRIMARY KEY \(source\)/);
    for (const sqlite of v5.statements.sqlite.filter((s) => s.startsWith('ALTER')))
      assert.match(sqlite, /ADD COLUMN/);
  });

  it('the parser catches the slips it is here for', () => {
    for (const broken of [
      'SELECT TOP @v1 id FROM jobs ORDER BY id',
      'INSERT INTO results (a) VALUES (@v1) ON CONFLICT (a) DO UPDATE SET a = excluded.a',
      'UPDATE jobs SET name = @v1 WHERE',
    ]) {
      assert.throws(() => parser.astify(broken, { database: 'transactsql' }), Error, broken);
    }
  });
});
