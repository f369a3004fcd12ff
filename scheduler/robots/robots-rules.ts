import { createRequire } from 'node:module';
import type robotsParserModule from 'robots-parser';
import { ROBOTS_MAX_BYTES } from '../../shared/protocol/messages.js';

// robots-parser is CommonJS whose types declare an ES default export: load it as what it is.
const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof robotsParserModule.default;

/** What robots.txt says of one URL. `line` and `rule` name the directive that decided it, if any. */
export interface RobotsVerdict {
  allowed: boolean;
  line?: number;
  rule?: string;
}

/**
 * The product token robots.txt groups are matched against: `ackcrawl` for
 * `ackcrawl/0.1 (+https://…)`. Lower-case, as matching is case-insensitive.
 */
export function productToken(userAgent: string): string {
  const token = /^[A-Za-z0-9_-]+/.exec(userAgent.trim())?.[0];
  return (token ?? '*').toLowerCase();
}

const DIRECTIVE = /^\s*(allow|disallow)\s*:/i;

/**
 * One host's robots.txt, parsed for one user agent with robots-parser (RFC 9309 matching: the
 * longest matching path wins, Allow on ties; a group naming the agent beats `*`). Rules are checked
 * by path and query only, so one file serves the host key whatever the scheme of the URL.
 */
export class RobotsRules {
  private readonly robot: ReturnType<typeof robotsParser>;
  /** The text of each Allow/Disallow line, by 1-based line number, to explain a decision. */
  private readonly directives = new Map<number, string>();
  /** Rough size in memory, for the cache's byte budget. */
  readonly bytes: number;
  /** Some `Disallow` line has a path, for any agent. */
  private readonly disallows: boolean;

  private constructor(
    private readonly origin: string,
    text: string,
    private readonly agent: string,
  ) {
    this.robot = robotsParser(`${origin}/robots.txt`, text);
    text.split(/\r\n|\r|\n/).forEach((line, i) => {
      if (DIRECTIVE.test(line)) this.directives.set(i + 1, line.replace(/#.*/, '').trim().slice(0, 200));
    });
    this.bytes = text.length * 2 + 256;
    // Asked for every task sent (RobotsGuard.checksHops): read once, the rules never change.
    this.disallows = [...this.directives.values()].some((line) => /^disallow\s*:\s*\S/i.test(line));
  }

  /** Rules from a robots.txt body fetched at `origin` (`scheme://host[:port]`). */
  static parse(origin: string, text: string, userAgent: string): RobotsRules {
    return new RobotsRules(origin, text.slice(0, ROBOTS_MAX_BYTES), productToken(userAgent));
  }

  /** No rules at all: robots.txt missing (4xx) or not consulted. */
  static allowAll(origin: string, userAgent: string): RobotsRules {
    return new RobotsRules(origin, '', productToken(userAgent));
  }

  check(url: string): RobotsVerdict {
    // No Allow/Disallow line at all (robots.txt missing, say): nothing to match, spare the parser.
    if (this.directives.size === 0) return { allowed: true };
    const probe = this.origin + pathAndQuery(url);
    if (this.robot.isAllowed(probe, this.agent) !== false) {
      const line = this.robot.getMatchingLineNumber(probe, this.agent);
      return line > 0 ? { allowed: true, line, rule: this.directives.get(line) ?? '' } : { allowed: true };
    }
    const line = this.robot.getMatchingLineNumber(probe, this.agent);
    return { allowed: false, line, rule: this.directives.get(line) ?? '' };
  }

  /**
   * True when no URL of the host can be disallowed: no `Disallow` line with a path, for any agent
   * (a missing robots.txt, an empty one, `Disallow:` alone). Conservative: a rule for another
   * agent counts too.
   */
  disallowsNothing(): boolean {
    return !this.disallows;
  }

  /** Crawl-delay for this agent (its group, else `*`) in ms, or null. */
  crawlDelayMs(): number | null {
    const seconds = this.robot.getCrawlDelay(this.agent);
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
  }

  /** The `Sitemap:` URLs, as written. */
  sitemaps(): string[] {
    return this.robot.getSitemaps();
  }
}

function pathAndQuery(url: string): string {
  const start = url.indexOf('://');
  const slash = start < 0 ? -1 : url.indexOf('/', start + 3);
  const query = start < 0 ? -1 : url.indexOf('?', start + 3);
  const from = slash < 0 ? query : query < 0 ? slash : Math.min(slash, query);
  if (from < 0) return '/';
  const rest = url.slice(from).replace(/#.*$/, '');
  return rest.startsWith('/') ? rest : `/${rest}`;
}
