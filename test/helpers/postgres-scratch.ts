import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresUrl, requirePostgres } from './services.js';

/** A scratch PostgreSQL database for one test file, dropped (with its connections) after. */
export async function scratchPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  await requirePostgres();
  const name = `ackcrawl_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // A connection of its own: the server may have been restarted by the test meanwhile.
    drop: () =>
      withAdmin(async (admin) => {
        // FORCE ends our own connections; an autovacuum worker that happens to be in the database
        // is the server's (42501: not ours to end) and leaves on its own within moments.
        for (let attempt = 1; ; attempt += 1) {
          try {
            await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            return;
          } catch (err) {
            const code = (err as { code?: string }).code;
            if (attempt >= 40 || (code !== '42501' && code !== '55006')) throw err;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        }
      }),
  };
}

async function withAdmin<T>(body: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: postgresUrl });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.end();
  }
}
