import type { Message } from 'kafkajs';

export interface SendLimits {
  /**
   * Bytes per partition in one send. A send carries one record batch per partition, and the broker
   * refuses a batch over its `max.message.bytes` (1 MiB by default).
   */
  maxPartitionBytes: number;
  /** Bytes in one send across all partitions (one produce request). */
  maxRequestBytes: number;
}

/** Key, value and an allowance for the record's framing within its batch. */
export function messageBytes(message: { key: Buffer; value: Buffer }): number {
  return message.key.length + message.value.length + 64;
}

/**
 * Splits one write into as few sends as the broker's size limits allow, keeping the order of the
 * messages (so per key, since a key always maps to one partition). Almost every write is one send;
 * a large write of large pages becomes a few.
 */
export function splitIntoSends(
  messages: readonly { key: Buffer; value: Buffer }[],
  partitionOf: (key: Buffer) => number,
  limits: SendLimits,
): Message[][] {
  const sends: Message[][] = [];
  let current: Message[] = [];
  let requestBytes = 0;
  let perPartition = new Map<number, number>();
  for (const message of messages) {
    const bytes = messageBytes(message);
    const partition = partitionOf(message.key);
    const partitionBytes = (perPartition.get(partition) ?? 0) + bytes;
    if (
      current.length > 0 &&
      (partitionBytes > limits.maxPartitionBytes || requestBytes + bytes > limits.maxRequestBytes)
    ) {
      sends.push(current);
      current = [];
      requestBytes = 0;
      perPartition = new Map();
    }
    current.push({ key: message.key, value: message.value });
    requestBytes += bytes;
    perPartition.set(partition, (perPartition.get(partition) ?? 0) + bytes);
  }
  if (current.length > 0) sends.push(current);
  return sends;
}
