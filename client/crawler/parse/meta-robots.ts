/**
 * Robots `<meta>` directives (https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag).
 *
 * `<meta name="robots" content="noindex, nofollow">` applies to every crawler; a `name` equal to a
 * crawler's user-agent token applies to that crawler only, so we obey `ackcrawl` too. Names and
 * directives are case-insensitive. Directives are comma-separated; we also split on whitespace because
 * pages write `content="noindex nofollow"` and no directive contains a space. `none` means
 * `noindex, nofollow`. Unknown directives are ignored.
 */

/** `<meta name>` values, lower-case, whose directives this crawler obeys. */
export const ROBOTS_META_NAMES: ReadonlySet<string> = new Set(['robots', 'ackcrawl']);

export interface RobotsDirectives {
  /** The page asks not to be indexed (stored or shown). */
  noindex: boolean;
  /** The page asks that its links not be followed. */
  nofollow: boolean;
}

/** Whether a `<meta name>` value addresses this crawler. */
export function isRobotsMetaName(name: string): boolean {
  return ROBOTS_META_NAMES.has(name.trim().toLowerCase());
}

/** Parses the `content` of a robots `<meta>`. */
export function parseRobotsDirectives(content: string): RobotsDirectives {
  const directives: RobotsDirectives = { noindex: false, nofollow: false };
  for (const token of content.toLowerCase().split(/[\s,]+/)) {
    if (token === 'none') {
      directives.noindex = true;
      directives.nofollow = true;
    } else if (token === 'noindex') {
      directives.noindex = true;
    } else if (token === 'nofollow') {
      directives.nofollow = true;
    }
  }
  return directives;
}
