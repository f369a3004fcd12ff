import { mulberry32, randomInt, type Random } from './prng.js';

const WORDS = (
  'ack broker crawl frontier lease host robots fetch parse link queue shard agent scheduler ' +
  'durable offset retry backoff politeness budget page record sink bucket partition consumer ' +
  'producer session credit window fingerprint canonical redirect status header body charset ' +
  'render anchor sitemap seed depth scope origin latency throughput replica commit journal ' +
  'snapshot index token stream buffer socket deadline drain signal worker process cluster'
).split(' ');

/**
 * A fixed pool of ASCII paragraphs built once from the site seed. Pages pick from the pool instead
 * of generating fresh text per request: the site shares the CPU with the crawler under test, and a
 * page built from a few string joins costs microseconds. ASCII only, so characters equal bytes.
 */
export function buildParagraphPool(seed: number, size = 96): readonly string[] {
  const random = mulberry32(seed ^ 0x5eed);
  return Array.from({ length: size }, () => sentenceRun(random, 300 + randomInt(random, 600)));
}

export function words(random: Random, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(WORDS[randomInt(random, WORDS.length)] ?? 'ack');
  return out.join(' ');
}

function sentenceRun(random: Random, minChars: number): string {
  let text = '';
  while (text.length < minChars) {
    const sentence = words(random, 6 + randomInt(random, 12));
    text += sentence.charAt(0).toUpperCase() + sentence.slice(1) + '. ';
  }
  return text.trimEnd();
}
