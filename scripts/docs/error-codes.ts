import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  API_ERROR_CODES,
  PAGE_ERROR_CODES,
  PROTOCOL_ERROR_CODES,
  SERVICE_ERROR_CODES,
} from '../../shared/error-codes/index.js';

/** docs/error-codes.md, generated from the catalogue the code uses (shared/error-codes). */
export const ERROR_CODES_PATH = fileURLToPath(new URL('../../../docs/error-codes.md', import.meta.url));

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');
const cell = (text: string): string => text.replace(/\|/g, '\\|');

function table(header: string[], rows: string[][]): string {
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

export function renderErrorCodes(): string {
  const page = Object.entries(PAGE_ERROR_CODES).map(([code, s]) => [
    `\`${code}\``,
    s.source,
    yesNo(s.retriable),
    s.meaning,
  ]);
  page.unshift([
    '`HTTP_<status>`',
    'fetch',
    '5xx and 429: yes; other statuses: no',
    'the server answered with that status (a 3xx without Location is `REDIRECT_WITHOUT_LOCATION`)',
  ]);
  const api = Object.entries(API_ERROR_CODES).map(([code, s]) => [
    `\`${code}\``,
    String(s.status),
    yesNo(s.retriable),
    s.meaning,
  ]);
  const protocol = Object.entries(PROTOCOL_ERROR_CODES).map(([code, s]) => [
    `\`${code}\``,
    s.fatal ? 'yes (closed, 1008)' : 'no',
    s.meaning,
  ]);
  const service = Object.entries(SERVICE_ERROR_CODES).map(([code, s]) => [
    `\`${code}\``,
    yesNo(s.retriable),
    s.meaning,
  ]);
  return `<!-- Generated from shared/error-codes by \`npm run docs:generate\`; edit the catalogue, not this file. -->

# Error codes

Every error ackcrawl reports has a stable code from one catalogue in the code
(\`shared/error-codes/\`): the fetcher and the renderer take whether a failure is retried from it,
the scheduler's retry policy reads it there (a crawler's own report counts only for a code this
version does not know), the HTTP APIs take their status from it, and this page is generated from
it. "Retried" means trying again can help: for a page, the retry tiers apply (at once, after the
retry delay, then final); for a service, the role tries again with backoff by itself.

## In page records (\`error.code\`)

${table(['code', 'from', 'retried', 'meaning'], page)}

## HTTP API answers (\`{"error":{"code","message"}}\`)

${table(['code', 'status', 'retry later can help', 'meaning'], api)}

An API can also answer with a code of the last table (roles and services). One that trying again
can help (a store or broker away or busy: \`SQL_UNAVAILABLE\`, \`FRONTIER_UNAVAILABLE\`, ...) is
503 with \`Retry-After: 5\`; any other is 500. Their message names no internals: the role's log
has the error whole.

## WebSocket \`error\` messages (scheduler → crawler)

${table(['code', 'fatal', 'meaning'], protocol)}

## Roles and services (logs, exit messages, \`RECORD_UNWRITABLE\` reasons)

${table(['code', 'retried', 'meaning'], service)}
`;
}

// `node dist/scripts/docs/error-codes.js` rewrites the file; `--check` fails if it drifted.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rendered = renderErrorCodes();
  if (process.argv.includes('--check')) {
    if (readFileSync(ERROR_CODES_PATH, 'utf8') !== rendered) {
      console.error('docs/error-codes.md is out of date: run npm run docs:generate');
      process.exit(1);
    }
  } else {
    writeFileSync(ERROR_CODES_PATH, rendered);
  }
}
