import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describeSqlUrl, parseSqlUrl } from '../../shared/adapters/sql-store/sql-url.js';
import {
  defaultSqlStoreUrl,
  sqlCaFileFromEnv,
  sqlStoreUrlFromEnv,
} from '../../shared/config/sql-settings.js';

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
const readFile = (path: string): Buffer => {
  if (path === '/etc/ackcrawl/ca.pem') return CA;
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};

describe('SQL store URLs', () => {
  it('sqlite: a plain path, sqlite:<path>, sqlite:///abs and :memory:', () => {
    assert.deepEqual(parseSqlUrl('/data/ackcrawl.db'), { dialect: 'sqlite', path: '/data/ackcrawl.db' });
    assert.deepEqual(parseSqlUrl('sqlite:/data/a.db'), { dialect: 'sqlite', path: '/data/a.db' });
    assert.deepEqual(parseSqlUrl('sqlite:///data/a.db'), { dialect: 'sqlite', path: '/data/a.db' });
    assert.deepEqual(parseSqlUrl('sqlite:rel/a.db'), { dialect: 'sqlite', path: resolve('rel/a.db') });
    assert.deepEqual(parseSqlUrl('rel/a.db'), { dialect: 'sqlite', path: resolve('rel/a.db') });
    assert.deepEqual(parseSqlUrl('sqlite::memory:'), { dialect: 'sqlite', path: ':memory:' });
  });

  it('postgres:// and postgresql:// go to pg as they are; a CA file replaces the URL’s SSL settings', () => {
    const plain = parseSqlUrl('postgresql://u:p@db.example:5432/crawl?sslmode=verify-full');
    assert.equal(plain.dialect, 'postgres');
    if (plain.dialect !== 'postgres') return;
    assert.equal(plain.config.connectionString, 'postgresql://u:p@db.example:5432/crawl?sslmode=verify-full');
    const withCa = parseSqlUrl('postgres://u:p@db.example/crawl?sslmode=require&application_name=x', {
      caFile: '/etc/ackcrawl/ca.pem',
      readFile,
    });
    if (withCa.dialect !== 'postgres') return assert.fail('not postgres');
    assert.deepEqual(withCa.config.ssl, { ca: CA, rejectUnauthorized: true });
    assert.equal(withCa.config.connectionString, 'postgres://u:p@db.example/crawl?application_name=x');
    const noVerify = parseSqlUrl('postgres://db/x?sslmode=no-verify', {
      caFile: '/etc/ackcrawl/ca.pem',
      readFile,
    });
    if (noVerify.dialect !== 'postgres') return assert.fail('not postgres');
    assert.deepEqual(noVerify.config.ssl, { ca: CA, rejectUnauthorized: false });
  });

  it('mssql:// and sqlserver:// become an mssql config: encrypted and verified unless told otherwise', () => {
    const t = parseSqlUrl('mssql://sa:p%40ss%3Bword@sql.example:14330/crawl');
    if (t.dialect !== 'mssql') return assert.fail('not mssql');
    assert.equal(t.config.server, 'sql.example');
    assert.equal(t.config.port, 14330);
    assert.equal(t.config.user, 'sa');
    assert.equal(t.config.password, 'p@ss;word');
    assert.equal(t.config.database, 'crawl');
    assert.equal(t.config.options?.encrypt, true);
    assert.equal(t.config.options?.trustServerCertificate, false);
    const lax = parseSqlUrl(
      'sqlserver://sa:x@[::1]/crawl?encrypt=false&trustServerCertificate=true&instanceName=SQLEXPRESS&requestTimeoutMs=5000',
      {
        caFile: '/etc/ackcrawl/ca.pem',
        readFile,
      },
    );
    if (lax.dialect !== 'mssql') return assert.fail('not mssql');
    assert.equal(lax.config.server, '::1');
    assert.equal(lax.config.port, undefined, 'a named instance is found by name, not port');
    assert.equal(lax.config.options?.instanceName, 'SQLEXPRESS');
    assert.equal(lax.config.options?.encrypt, false);
    assert.equal(lax.config.options?.trustServerCertificate, true);
    assert.equal(lax.config.requestTimeout, 5000);
    assert.deepEqual(lax.config.options?.cryptoCredentialsDetails, { ca: CA });
  });

  it('refuses unknown schemes, unknown parameters and unreadable CA files, never repeating the password', () => {
    const cases = [
      'mysql://u:hunter2@h/db',
      'mssql://u:hunter2@h/db?encrypt=maybe',
      'mssql://u:hunter2@h/db?encrpyt=true',
      'mssql://u:hunter2@/db',
      'sqlite:',
      '',
    ];
    for (const url of cases) {
      assert.throws(
        () => parseSqlUrl(url),
        (err: Error & { code?: string }) =>
          err.code === 'SQL_URL_INVALID' && !err.message.includes('hunter2'),
        url,
      );
    }
    assert.throws(() => parseSqlUrl('postgres://u:hunter2@h/db', { caFile: '/missing.pem', readFile }), {
      code: 'SQL_URL_INVALID',
    });
    assert.equal(
      describeSqlUrl('postgres://u:hunter2@h:5432/db?password=x'),
      'postgres://u:***@h:5432/db?password=***',
    );
  });

  it('ACKCRAWL_SQL_URL, or the SQLite file in the data dir; a bad URL is a ConfigError', () => {
    assert.equal(defaultSqlStoreUrl('/var/lib/ackcrawl'), 'sqlite:/var/lib/ackcrawl/ackcrawl.db');
    assert.equal(sqlStoreUrlFromEnv({}, '/var/lib/ackcrawl'), 'sqlite:/var/lib/ackcrawl/ackcrawl.db');
    assert.equal(sqlStoreUrlFromEnv({ ACKCRAWL_SQL_URL: '  ' }, '/d'), 'sqlite:/d/ackcrawl.db');
    assert.equal(sqlStoreUrlFromEnv({ ACKCRAWL_SQL_URL: 'postgres://h/db' }, '/d'), 'postgres://h/db');
    assert.throws(
      () => sqlStoreUrlFromEnv({ ACKCRAWL_SQL_URL: 'oracle://u:hunter2@h/db' }, '/d'),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.match(err.message, /ACKCRAWL_SQL_URL/);
        assert.ok(!err.message.includes('hunter2'));
        return true;
      },
    );
    assert.equal(sqlCaFileFromEnv({ ACKCRAWL_SQL_CA_FILE: '/ca.pem' }), '/ca.pem');
    assert.equal(sqlCaFileFromEnv({}), undefined);
  });
});
