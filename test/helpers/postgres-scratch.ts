import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresUrl, requirePostgres } from './services.js';

/** A scratch PostgreSQL database for one test file, dropped (with its connections) after. */
export async function scratchPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  await requirePostgres();
  const name = `ackcrawl_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
