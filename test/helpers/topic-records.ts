import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import type { CliRun } from './cli.js';
import { waitFor } from './wait-for.js';

export const KAFKA_BROKERS = (process.env.ACKCRAWL_KAFKA_BROKERS ?? '127.0.0.1:9092')
  .split(/[\s,]+/)
  .filter(Boolean);

/**
 * Reads a topic from the beginning with a fresh consumer group until `until` holds for what was
 * read (or the deadline passes), then returns every record, in the order read.
 */
export async function readPageRecords(
  topic: string,
  until: (records: PageRecord[]) => boolean,
  timeoutMs = 60_000,
  brokers: readonly string[] = KAFKA_BROKERS,
): Promise<PageRecord[]> {
  const kafka = new Kafka({
    clientId: 'ackcrawl-test-reader',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `test-reader-${Date.now()}-${Math.random()}` });
  const records: PageRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value) records.push(JSON.parse(message.value.toString('utf8')) as PageRecord);
      },
    });
    await waitFor(() => until(records), { timeoutMs, intervalMs: 200 }).catch(() => {
      const distinct = new Set(records.map((r) => r.url)).size;
      throw new Error(
        `timed out reading ${topic}: ${records.length} records read, ${distinct} distinct URLs`,
      );
    });
    return records;
  } finally {
    await consumer.disconnect();
  }
}

/** Reads the topic until `pages` distinct URLs have a record (see readPageRecords). */
export function readDistinctPages(
  topic: string,
  pages: number,
  timeoutMs = 120_000,
  brokers: readonly string[] = KAFKA_BROKERS,
): Promise<PageRecord[]> {
  return readPageRecords(topic, (r) => new Set(r.map((x) => x.url)).size >= pages, timeoutMs, brokers);
}

/** What a whole crawl left in Kafka: every record read, and how many of them repeat a page. */
export interface CrawlDelivery {
  records: PageRecord[];
  duplicates: number;
}

/**
 * The end of a crawl that must lose nothing: `ackcrawl crawl --cluster --json` exited 0 having
 * settled `pages` pages, and Kafka holds a record of each. Returns the records and the duplicates
 * among them, for the test to report and bound.
 */
export async function expectWholeCrawl(
  crawl: CliRun,
  topic: string,
  pages: number,
  brokers: readonly string[] = KAFKA_BROKERS,
): Promise<CrawlDelivery> {
  const result = await crawl.done;
  assert.equal(result.code, 0, result.stderr.slice(-3000));
  assert.equal((JSON.parse(result.stdout) as { pages: number }).pages, pages, 'every page settled');
  const records = await readDistinctPages(topic, pages, 120_000, brokers);
  const distinct = new Set(records.map((r) => r.url)).size;
  assert.equal(distinct, pages, 'every page in Kafka');
  return { records, duplicates: records.length - distinct };
}
