import type { RenderRules } from '../../shared/protocol/render-rules.js';
import type { Lease } from '../../shared/protocol/task.js';
import { createHostMatcher } from '../../shared/url/host-patterns.js';

/** True when a leased task must be rendered in a browser, so only a render crawler may take it. */
export type RenderPredicate = (lease: Lease) => boolean;

/**
 * A job's render rules as a predicate on leases, or null when nothing is rendered (the dispatcher
 * then does no extra work). Sitemaps are always fetched: there is nothing to render in XML.
 */
export function renderPredicate(rules: Partial<RenderRules>): RenderPredicate | null {
  if (rules.render === 'always') return (lease) => lease.kind !== 'sitemap';
  const hosts = rules.renderHosts ?? [];
  if (hosts.length === 0) return null;
  const matches = createHostMatcher(hosts);
  return (lease) => lease.kind !== 'sitemap' && matches(lease.host);
}
