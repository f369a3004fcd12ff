import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';

/** Every complete page record in an output folder, in file order (a torn last line is skipped). */
export function readRecords(dir: string): PageRecord[] {
  const records: PageRecord[] = [];
  const files = readdirSync(dir)
    .filter((f) => /^pages-\d+\.jsonl(\.gz)?$/.test(f))
    .sort();
  for (const file of files) {
    const raw = readFileSync(join(dir, file));
    const text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
    const lines = text.split('\n');
    const complete = text.endsWith('\n') ? lines.slice(0, -1) : lines.slice(0, -1);
    for (const line of complete) if (line) records.push(JSON.parse(line) as PageRecord);
  }
  return records;
}

/** url → how many records it has. */
export function countByUrl(records: readonly PageRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.url, (counts.get(r.url) ?? 0) + 1);
  return counts;
}

/** The job and run a record names (page records carry them since runs; older ones have neither). */
export function recordTags(record: PageRecord): { jobId: string | undefined; runId: string | undefined } {
  const tagged = record as unknown as { jobId?: string; runId?: string };
  return { jobId: tagged.jobId, runId: tagged.runId };
}

/** The keys of an outcome frame's record as its JSON has them, in their order. */
export function recordKeysOf(frame: Buffer): string[] {
  return Object.keys(JSON.parse(decodeOutcomeFrame(frame).record.toString('utf8')) as object);
}
