import { z } from 'zod';
import { hostPatternSchema } from '../url/host-patterns.js';

/**
 * Which pages of a job are rendered in a browser (JavaScript run, the DOM recorded) instead of
 * fetched: `render` for every page (`always`) or none (`never`, the default), plus `renderHosts`,
 * host patterns whose pages are rendered whatever `render` says. The scheduler decides this when it
 * dispatches a task, so changing the rules applies to every task not yet sent.
 */
export type RenderMode = 'never' | 'always';

/** `never`/`always`, or a boolean (`true` = always), as a config file or environment gives it. */
export const renderModeSchema = z.preprocess(
  (v) => {
    if (v === true || v === 'true') return 'always';
    if (v === false || v === 'false') return 'never';
    return v;
  },
  z.enum(['never', 'always']),
);

export const renderHostsSchema = z.array(hostPatternSchema).max(1000);

export interface RenderRules {
  render: RenderMode;
  renderHosts: string[];
}

/** The capability a crawler announces in its hello when it can render pages. */
export const RENDER_CAPABILITY = 'render';
