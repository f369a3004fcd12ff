import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths.js';

/** Where scripts/services.sh's single Kafka broker keeps its logs (`log.dirs`). */
export const KAFKA_LOG_DIR = join(repoRoot, '.services', 'kafka', 'data');

/**
 * Bytes of `topic`'s log segments on the broker's disk (every `.log` file of its partition folders
 * `<topic>-<n>`): what Kafka stores for the records, compressed or not, with its batch framing.
 * Null when the folder holds no partition of the topic (Kafka runs elsewhere, or the topic is gone).
 */
export function topicLogBytes(topic: string, logDir: string = KAFKA_LOG_DIR): number | null {
  let entries: string[];
  try {
    entries = readdirSync(logDir);
  } catch {
    return null;
  }
  const partitions = entries.filter(
    (name) => name.startsWith(`${topic}-`) && /^\d+$/.test(name.slice(topic.length + 1)),
  );
  if (partitions.length === 0) return null;
  let bytes = 0;
  for (const partition of partitions) {
    const dir = join(logDir, partition);
    for (const file of readdirSync(dir)) if (file.endsWith('.log')) bytes += statSync(join(dir, file)).size;
  }
  return bytes;
}
