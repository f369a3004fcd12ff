import type { Logger } from '../../logger.js';
import type { BlobStore } from '../../ports/blob-store.js';
import type { SinkRecord } from '../../ports/page-sink.js';
import { restoreClaimChecks } from './claim-check-restore.js';
import { parseKafkaCheckpoint, rangesAfter } from './kafka-checkpoint.js';
import type { KafkaTransport } from './kafka-transport.js';

export interface RecoveryDeps {
  topic: string;
  transport: KafkaTransport;
  blobStore: BlobStore;
  /** Creates the topic if missing and learns its partitions. */
  prepare: () => Promise<void>;
  maxBytes: number;
  timeoutMs: number;
  logger: Logger;
}

export interface Recovered {
  records: SinkRecord[];
  /**
   * The checkpoint's end of each partition there is now (a partition newer than the checkpoint:
   * its first offset); null when `checkpoint` was not this topic's.
   */
  from: number[] | null;
}

/**
 * After a crash: the records in the topic from `checkpoint` (the frontier's, stored with its last
 * settlement) to each partition's end now. They were confirmed by Kafka, but maybe not settled: the
 * crawl settles their tasks from them rather than fetching and writing them again. Records from other
 * writers of the topic may be among them; any durable record of a URL settles it as well. Link lists
 * moved by the claim check are read back, so the records are as the crawler wrote them (bodies stay
 * where they are: settling needs none). A record whose lists cannot be read is left out (its task is
 * fetched again); so is everything, with a warning, when Kafka cannot be read.
 */
export async function recoverAfter(checkpoint: string | null, deps: RecoveryDeps): Promise<Recovered> {
  const { logger } = deps;
  const parsed = parseKafkaCheckpoint(checkpoint);
  if (!parsed || parsed.topic !== deps.topic) {
    if (checkpoint !== null) {
      logger.warn(
        { checkpoint: checkpoint.slice(0, 200) },
        'the frontier checkpoint is not one of this topic; nothing to recover (unsettled records will be written again)',
      );
    }
    return { records: [], from: null };
  }
  const started = Date.now();
  let from: number[] | null = null;
  try {
    await deps.prepare();
    const now = await deps.transport.offsets();
    from = [];
    for (const { partition, low } of now) from[partition] = parsed.ends[partition] ?? low;
    const ranges = rangesAfter(parsed.ends, now);
    if (ranges.length === 0) return { records: [], from };
    const read = await deps.transport.read(ranges, { maxBytes: deps.maxBytes, timeoutMs: deps.timeoutMs });
    const records = await restoreAll(read.records, deps);
    const inRanges = ranges.reduce((sum, r) => sum + (r.to - r.from), 0);
    logger.info(
      { records: records.length, inRanges, complete: read.complete, ms: Date.now() - started },
      'read the records written after the last settled batch',
    );
    if (!read.complete) {
      logger.warn(
        { read: read.records.length, inRanges, maxBytes: deps.maxBytes, timeoutMs: deps.timeoutMs },
        'could not read every record after the checkpoint; the tasks of the others are fetched again',
      );
    }
    return { records, from };
  } catch (err) {
    logger.warn({ err }, 'could not read the records after the checkpoint; their tasks are fetched again');
    return { records: [], from };
  }
}

async function restoreAll(records: readonly SinkRecord[], deps: RecoveryDeps): Promise<SinkRecord[]> {
  const out: (SinkRecord | null)[] = new Array<SinkRecord | null>(records.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < records.length) {
      const index = next++;
      const record = records[index] as SinkRecord;
      try {
        out[index] = { key: record.key, value: await restoreClaimChecks(record.value, deps.blobStore) };
      } catch (err) {
        deps.logger.warn(
          { err, url: record.key },
          'could not read back a record’s link lists; its task is fetched again',
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, records.length) }, worker));
  return out.filter((r): r is SinkRecord => r !== null);
}
