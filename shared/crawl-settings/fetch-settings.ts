import type { FetchSettings } from '../protocol/messages.js';
import type { CrawlSettings } from './schema.js';

/**
 * What crawlers need of a crawl's settings (the `welcome` and `settings` messages): the one map
 * from a crawl's settings to the protocol's FetchSettings.
 */
export function fetchSettingsOf(settings: CrawlSettings): FetchSettings {
  return {
    userAgent: settings.userAgent,
    connectTimeoutMs: settings.connectTimeoutMs,
    responseTimeoutMs: settings.responseTimeoutMs,
    totalTimeoutMs: settings.totalTimeoutMs,
    maxRedirects: settings.maxRedirects,
    maxBodyBytes: settings.maxBodyBytes,
    allowPrivate: settings.allowPrivate,
    maxUrlLength: settings.maxUrlLength,
    maxLinksPerPage: settings.maxLinksPerPage,
    ...(settings.defaultCharset ? { defaultCharset: settings.defaultCharset } : {}),
    ...(settings.userAgents.length > 0 ? { userAgents: settings.userAgents } : {}),
    ...(settings.headers.length > 0 ? { headers: settings.headers } : {}),
    ...(settings.cookies.length > 0 ? { cookies: settings.cookies } : {}),
    ...(settings.proxies.length > 0 ? { proxies: settings.proxies } : {}),
    proxyMaxFailures: settings.proxyMaxFailures,
    proxyCooloffMs: settings.proxyCooloffMs,
    allowAddresses: settings.allowAddresses,
    sitemapMaxUrls: settings.sitemapMaxUrls,
    sitemapMaxBytes: settings.sitemapMaxBytes,
  };
}
