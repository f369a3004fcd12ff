import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { PAGE_RECORD_SCHEMA, storedPageRecordSchema } from '../../shared/protocol/page-record.js';

/** docs/page-record.schema.json, generated from the zod schema the code validates with. */
export const SCHEMA_PATH = fileURLToPath(new URL('../../../docs/page-record.schema.json', import.meta.url));

/** Every record a sink may store, link lists moved to the blob store included. */
export function renderPageRecordJsonSchema(): string {
  const schema = z.toJSONSchema(storedPageRecordSchema);
  const version = PAGE_RECORD_SCHEMA.split('/')[1] ?? '';
  const $id = `https://ackcrawl.dev/schemas/page-record-${version}.json`;
  return `${JSON.stringify({ ...schema, $id, title: `ackcrawl page record, version ${version}` }, null, 2)}\n`;
}

// `node dist/scripts/docs/page-record-schema.js` rewrites the file; `--check` fails if it drifted.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rendered = renderPageRecordJsonSchema();
  if (process.argv.includes('--check')) {
    if (readFileSync(SCHEMA_PATH, 'utf8') !== rendered) {
      console.error('docs/page-record.schema.json is out of date: run npm run docs:generate');
      process.exit(1);
    }
  } else {
    writeFileSync(SCHEMA_PATH, rendered);
  }
}
