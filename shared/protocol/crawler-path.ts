/** The path of a scheduler's WebSocket endpoint for crawlers: `ws://host:port/crawlers`. */
export const CRAWLER_PATH = '/crawlers';
