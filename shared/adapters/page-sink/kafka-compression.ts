/**
 * How the page sink compresses its record batches (ACKCRAWL_KAFKA_COMPRESSION). Kept apart from
 * the codec (kafka-gzip-codec.ts), so that reading the settings never loads kafkajs.
 */
export const KAFKA_COMPRESSIONS = ['none', 'gzip'] as const;
export type KafkaCompression = (typeof KAFKA_COMPRESSIONS)[number];
