/**
 * Child process for the concurrent-open test: prints `ready`, waits (spinning, so that the
 * children start as close together as they can) until the file <go> exists, opens the SQL store
 * at <url> without migrating, and prints `opened` (or `error <code>`).
 *
 * Usage: node sql-open-child.js <url> <go file>
 */
import { existsSync } from 'node:fs';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';

const [url, go] = process.argv.slice(2);
if (url === undefined || go === undefined) {
  process.stderr.write('usage: sql-open-child <url> <go file>\n');
  process.exit(2);
}

process.stdout.write('ready\n');
const deadline = Date.now() + 20_000;
while (!existsSync(go)) {
  if (Date.now() > deadline) process.exit(3);
}
try {
  const store = await openSqlStore(url, { migrate: false });
  await store.close();
  process.stdout.write('opened\n');
} catch (err) {
  process.stdout.write(`error ${(err as { code?: string }).code ?? String(err)}\n`);
}
