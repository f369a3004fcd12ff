import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import iconv from 'iconv-lite';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';

const TEXT = '没有声明编码的中文页面';

describe('crawl --default-charset', () => {
  test('an unlabelled GBK page is decoded as GBK when the crawl says so, and a bad label is refused', async () => {
    // No charset in the header, no meta, no BOM: only the crawl's default can tell.
    const page = iconv.encode(`<!doctype html><title>${TEXT}</title><p>${TEXT}</p>`, 'gbk');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const dirs: string[] = [];
    const crawl = async (extra: string[]) => {
      const out = mkdtempSync(join(tmpdir(), 'ackcrawl-charset-'));
      dirs.push(out);
      const result = await runCli(['crawl', url, '--out', out, '--allow-private', '--json', ...extra]);
      assert.equal(result.code, 0, result.stderr);
      const [record] = readRecords(out);
      assert.ok(record);
      return record;
    };
    try {
      const chinese = await crawl(['--default-charset', 'gb2312']);
      assert.ok(chinese.body?.includes(TEXT), 'decoded as GBK');
      assert.deepEqual(chinese.charset, { name: 'GBK', source: 'default' });
      const western = await crawl([]);
      assert.ok(
        !western.body?.includes(TEXT),
        'without the setting, windows-1252 as browsers in most locales',
      );
      assert.equal(western.charset?.name, 'windows-1252');
      const bad = await runCli(['crawl', url, '--default-charset', 'klingon', '--allow-private']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--default-charset: "klingon" is not a charset/);
    } finally {
      server.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
