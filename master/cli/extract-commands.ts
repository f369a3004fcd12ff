import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidInputError } from '../../shared/errors.js';
import type { CleanedPage } from '../extract/cleaned-page.js';

/** What `extract-file --json` prints: the columns a results row gets from the page. */
export function extractFileAnswer(page: CleanedPage, url: string | null): Record<string, unknown> {
  return {
    url,
    title: page.title,
    author: page.author,
    publishedAt: page.publishedAt === null ? null : new Date(page.publishedAt).toISOString(),
    language: page.language,
    description: page.description,
    canonicalUrl: page.canonicalUrl,
    mainText: page.mainText,
    data: page.extra,
  };
}

function readable(answer: Record<string, unknown>): string {
  const { mainText, data: _data, ...head } = answer;
  const lines = Object.entries(head).map(([k, v]) => `${k.padEnd(13)} ${v === null ? '-' : String(v)}`);
  return `${lines.join('\n')}\n\n${String(mainText)}`;
}

function checkedUrl(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.href;
  } catch {
    // reported below
  }
  throw new InvalidInputError('URL_INVALID', `--url takes an http(s) URL, not '${url}'`);
}

/** `ackcrawl extract` (the downstream cleaner) and `ackcrawl extract-file` (one saved page). */
export function registerExtractCommands(program: Command, fail: (err: unknown) => never): void {
  program
    .command('extract')
    .description(
      'clean page records into the SQL results table: a Kafka consumer group on the page topic, or the record files of --records (docs/extract.md)',
    )
    .option(
      '--records <dir>',
      'read the record files of this folder (an embedded crawl or serve) instead of Kafka',
    )
    .option('--once', 'with --records: stop at the end of the files instead of following them')
    .option('--config <file>', 'a JSON config file (ACKCRAWL_CONFIG)')
    .action(async (options: { records?: string; once?: boolean; config?: string }) => {
      if (options.config) process.env.ACKCRAWL_CONFIG = resolve(options.config);
      const { main } = await import('../extract/main.js');
      await main(process.env, {
        ...(options.records ? { extractRecordsDir: resolve(options.records) } : {}),
        ...(options.once ? { extractFollow: false } : {}),
      }).catch(fail);
    });

  program
    .command('extract-file')
    .description('clean one saved HTML page and print what the results table would get')
    .argument('<file.html>', 'the page as fetched (its bytes: the charset is found as the crawler finds it)')
    .option('--url <url>', 'the URL it was fetched from (resolves a relative canonical link)')
    .option('--json', 'print JSON')
    .action(async (file: string, options: { url?: string; json?: boolean }) => {
      try {
        // Loaded here: the DOM, Readability and the language models take ~65 MB, which no other
        // command (a crawl's parent process above all) should carry.
        const { cleanSavedPage } = await import('../extract/clean-saved-page.js');
        const url = checkedUrl(options.url);
        let bytes: Buffer;
        try {
          bytes = readFileSync(file);
        } catch (err) {
          throw new InvalidInputError(
            'EXTRACT_FILE_UNREADABLE',
            `cannot read ${file}: ${(err as Error).message}`,
          );
        }
        const answer = extractFileAnswer(cleanSavedPage(bytes, url), url);
        process.stdout.write(options.json ? `${JSON.stringify(answer, null, 2)}\n` : `${readable(answer)}\n`);
      } catch (err) {
        fail(err);
      }
    });
}
