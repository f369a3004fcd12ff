/**
 * The Kafka sink's checkpoint: for each partition of its topic, the offset after the last record of
 * its last confirmed write (the partition's end as this sink last knew it). Records at or after it
 * may not be settled yet; records before it are.
 */
export interface KafkaCheckpoint {
  topic: string;
  /** Index: partition. */
  ends: number[];
}

/** `{"kafka":"<topic>","ends":[120,98,…]}`: small (one number per partition) and self-describing. */
export function formatKafkaCheckpoint(checkpoint: KafkaCheckpoint): string {
  return JSON.stringify({ kafka: checkpoint.topic, ends: checkpoint.ends });
}

/** Null when `text` is not a Kafka checkpoint (absent, or written by another sink). */
export function parseKafkaCheckpoint(text: string | null): KafkaCheckpoint | null {
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as { kafka?: unknown; ends?: unknown };
    const { kafka, ends } = parsed;
    if (typeof kafka !== 'string' || !Array.isArray(ends)) return null;
    if (!ends.every((n): n is number => Number.isSafeInteger(n) && (n as number) >= 0)) return null;
    return { topic: kafka, ends };
  } catch {
    return null;
  }
}

export interface PartitionOffsets {
  partition: number;
  /** The partition's first offset still stored. */
  low: number;
  /** The offset its next record will get. */
  high: number;
}

/** Offsets `from` (inclusive) to `to` (exclusive) of one partition. */
export interface ReadRange {
  partition: number;
  from: number;
  to: number;
}

/**
 * What was written after `ends`, partition by partition, up to each partition's end now: from the
 * checkpoint's offset, or from the first stored record when that offset is gone (retention) or the
 * partition is newer than the checkpoint. Partitions with nothing new are left out.
 */
export function rangesAfter(ends: readonly number[], now: readonly PartitionOffsets[]): ReadRange[] {
  const ranges: ReadRange[] = [];
  for (const { partition, low, high } of now) {
    const from = Math.max(ends[partition] ?? low, low);
    if (from < high) ranges.push({ partition, from, to: high });
  }
  return ranges.sort((a, b) => a.partition - b.partition);
}

/**
 * Where this sink's writes end in each partition, learnt from produce answers: a send that put `n`
 * records in a partition was given offsets `baseOffset` to `baseOffset + n − 1`. Ends only grow. An
 * answer without a usable offset leaves the end where it was: the checkpoint is then behind, and
 * recovery reads a few records more, never fewer.
 */
export class PartitionEnds {
  private ends: number[];

  constructor(initial: readonly number[]) {
    this.ends = [...initial];
  }

  confirm(
    answers: readonly { partition: number; baseOffset?: string | undefined }[],
    counts: ReadonlyMap<number, number>,
  ): void {
    for (const { partition, baseOffset } of answers) {
      const base = Number(baseOffset);
      if (!Number.isSafeInteger(base) || base < 0) continue;
      const end = base + (counts.get(partition) ?? 1);
      if (end > (this.ends[partition] ?? 0)) this.ends[partition] = end;
    }
  }

  snapshot(): number[] {
    return Array.from(this.ends, (end) => end ?? 0);
  }
}
