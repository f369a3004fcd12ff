import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Output segments are `pages-000001.jsonl`, rotated by size and gzip-compressed when closed. */
export const SEGMENT_PATTERN = /^pages-(\d{6})\.jsonl(\.gz)?$/;

export interface SegmentFile {
  index: number;
  path: string;
  gzip: boolean;
}

export function segmentName(index: number, gzip: boolean): string {
  return `pages-${String(index).padStart(6, '0')}.jsonl${gzip ? '.gz' : ''}`;
}

/** Segments in `dir`, by index; a plain file wins over a gzip one of the same index (see gzip.ts). */
export function listSegments(dir: string): SegmentFile[] {
  const byIndex = new Map<number, SegmentFile>();
  for (const name of readdirSync(dir)) {
    const match = SEGMENT_PATTERN.exec(name);
    if (!match) continue;
    const index = Number(match[1]);
    const gzip = match[2] !== undefined;
    const existing = byIndex.get(index);
    if (existing && !existing.gzip) continue;
    byIndex.set(index, { index, path: join(dir, name), gzip });
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

export function formatCheckpoint(index: number, offset: number): string {
  return `${index}:${offset}`;
}

export function parseCheckpoint(checkpoint: string | null): { index: number; offset: number } | null {
  if (checkpoint === null) return null;
  const match = /^(\d+):(\d+)$/.exec(checkpoint);
  if (!match) return null;
  return { index: Number(match[1]), offset: Number(match[2]) };
}
