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
 * a large write of large pages becomes a few, each bounded in bytes (and given its own deadline by
 * the sink). The messages come back as given (same objects), so callers can carry more in them.
 */
export function splitIntoSends<M extends { key: Buffer; value: Buffer }>(
  messages: readonly M[],
  partitionOf: (key: Buffer) => number,
  limits: SendLimits,
): M[][] {
  const sends: M[][] = [];
  let current: M[] = [];
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
    current.push(message);
    requestBytes += bytes;
    perPartition.set(partition, (perPartition.get(partition) ?? 0) + bytes);
  }
  if (current.length > 0) sends.push(current);
  return sends;
}

/** The messages of one send by partition, each partition's in the order given. */
export function byPartition<M extends { key: Buffer }>(
  messages: readonly M[],
  partitionOf: (key: Buffer) => number,
): { partition: number; messages: M[] }[] {
  const parts = new Map<number, M[]>();
  for (const message of messages) {
    const partition = partitionOf(message.key);
    const part = parts.get(partition);
    if (part) part.push(message);
    else parts.set(partition, [message]);
  }
  return [...parts].map(([partition, list]) => ({ partition, messages: list }));
}
