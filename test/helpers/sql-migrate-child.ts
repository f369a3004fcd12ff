/**
 * Child process for the concurrent-migration test: opens the SQL store at <url> without
 * migrating, prints `ready`, waits until the file <go> exists, then migrates and prints the
 * MigrationReport as JSON (or `error <code>`).
 *
 * Usage: node sql-migrate-child.js <url> <go file>
 */
import { existsSync } from 'node:fs';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';

const [url, go] = process.argv.slice(2);
if (url === undefined || go === undefined) {
  process.stderr.write('usage: sql-migrate-child <url> <go file>\n');
  process.exit(2);
}

const store = await openSqlStore(url, { migrate: false });
process.stdout.write('ready\n');
const deadline = Date.now() + 20_000;
while (!existsSync(go)) {
  if (Date.now() > deadline) process.exit(3);
  await new Promise((resolve) => setTimeout(resolve, 1));
}
try {
  process.stdout.write(`${JSON.stringify(await store.migrate())}\n`);
} catch (err) {
  process.stdout.write(`error ${(err as { code?: string }).code ?? String(err)}\n`);
} finally {
  await store.close();
}
