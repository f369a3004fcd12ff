import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { StorageError } from '../../shared/errors.js';
import { writeFileAtomic } from '../../shared/files/atomic-write.js';

/**
 * How far the record-file reader got: the segment index and how many of its lines (records) are
 * cleaned and committed. Counted in lines, not bytes, because a closed segment is replaced by its
 * gzip form (same records, other bytes). Kept in a small JSON file written atomically after each
 * committed chunk, so a restart goes on from there.
 */
export interface SegmentPosition {
  index: number;
  line: number;
}

const positionSchema = z.object({
  index: z.number().int().nonnegative(),
  line: z.number().int().nonnegative(),
});

export const START: SegmentPosition = { index: 0, line: 0 };

export function readPosition(path: string): SegmentPosition {
  if (!existsSync(path)) return START;
  try {
    return positionSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (err) {
    throw new StorageError(
      'EXTRACT_BAD_RECORD',
      `the extract position file ${path} is not one this version wrote; remove it to start over (rows already written stay, and are not duplicated)`,
      { cause: err },
    );
  }
}

export function writePosition(path: string, position: SegmentPosition, now: number): void {
  writeFileAtomic(path, `${JSON.stringify({ ...position, at: new Date(now).toISOString() })}\n`, {
    mode: 0o644,
  });
}
