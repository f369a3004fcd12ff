import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { pageSinkContract } from './page-sink.contract.js';

/** The records in the sink's JSON-lines files, read straight from disk, in file order. */
function readJsonl(dir: string): SinkRecord[] {
  return readdirSync(dir)
    .filter((f) => /^pages-\d+\.jsonl$/.test(f))
    .sort()
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
    .filter((line) => line.length > 0)
    .map((line) => ({ key: (JSON.parse(line) as { url: string }).url, value: Buffer.from(line) }));
}

pageSinkContract('file sink', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-file-sink-'));
  return {
    sink: new FileSink({ dir }),
    readBack: async () => readJsonl(dir),
    claimCheck: null,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
