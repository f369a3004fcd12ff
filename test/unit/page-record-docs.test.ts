import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { renderPageRecordJsonSchema, SCHEMA_PATH } from '../../scripts/docs/page-record-schema.js';

test('docs/page-record.schema.json matches the schema the code validates with', () => {
  assert.equal(readFileSync(SCHEMA_PATH, 'utf8'), renderPageRecordJsonSchema(), 'run: npm run docs:generate');
});
