import { InvalidInputError } from '../../../errors.js';

/** One broker URL, or the URLs of the nodes of one RabbitMQ cluster (any node serves every queue). */
export type BrokerUrls = string | readonly string[];

const AMQP_URL = /^amqps?:\/\/[^\s,]+$/;

/** The URLs as a list, each checked; FRONTIER_BAD_URL for an empty list or a URL that is not amqp(s)://. */
export function brokerUrlList(urls: BrokerUrls): readonly string[] {
  const list = typeof urls === 'string' ? [urls] : [...urls];
  if (list.length === 0) throw new InvalidInputError('FRONTIER_BAD_URL', 'no RabbitMQ URL given');
  for (const url of list) {
    if (!AMQP_URL.test(url)) {
      throw new InvalidInputError(
        'FRONTIER_BAD_URL',
        `a RabbitMQ URL is amqp://… or amqps://… without spaces or commas, got ${describeUrl(url)}`,
      );
    }
  }
  return Object.freeze(list);
}

/** host:port of a URL, for logs and messages: never its credentials. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
  } catch {
    return '(not a URL)';
  }
}

/**
 * The broker URLs of a cluster taken in turn: `current` is the one to connect to; `advance` moves
 * to the next (round robin) after a failed connect or a lost link, so a dead node is left for the
 * next one and comes round again only after every other was tried.
 */
export class UrlRotation {
  readonly urls: readonly string[];
  private index = 0;

  constructor(urls: BrokerUrls) {
    this.urls = brokerUrlList(urls);
  }

  get size(): number {
    return this.urls.length;
  }

  get current(): string {
    return this.urls[this.index] as string;
  }

  /** Moves on to the next URL and returns it. */
  advance(): string {
    this.index = (this.index + 1) % this.urls.length;
    return this.current;
  }

  /**
   * Connects to the current URL, moving on after each failure until every URL was tried once;
   * rejects with the last failure (every URL failed). The rotation stays on the URL that answered.
   */
  async connectAny<T>(
    connect: (url: string) => Promise<T>,
    onFailure?: (url: string, err: unknown) => void,
  ): Promise<T> {
    let last: unknown;
    for (let tried = 0; tried < this.urls.length; tried++) {
      const url = this.current;
      try {
        return await connect(url);
      } catch (err) {
        last = err;
        onFailure?.(url, err);
        this.advance();
      }
    }
    throw last;
  }
}
