import { createRequire } from 'node:module';
import type { RE2 as RE2Class } from 're2-wasm';
import { InvalidInputError } from '../errors.js';

/** Longest pattern a job may give, in characters. */
export const MAX_URL_PATTERN_LENGTH = 1_000;
/** Patterns of each list at most. */
export const MAX_URL_PATTERNS = 100;

const require = createRequire(import.meta.url);
let engine: typeof RE2Class | null = null;

/**
 * RE2 (Google's, compiled to WebAssembly): patterns come from a job, URLs from the web, and RE2 runs
 * in time linear in the URL whatever the pattern, where a backtracking engine can take exponential
 * time on a pattern such as `(a+)+$` (ReDoS). Loaded with the first pattern: its memory (about
 * 20 MB) is paid only by a process that has one.
 */
function re2(): typeof RE2Class {
  engine ??= (require('re2-wasm') as { RE2: typeof RE2Class }).RE2;
  return engine;
}

/** A compiled pattern: true when it is found anywhere in the URL (anchor it with ^ or $). */
export interface UrlPattern {
  source: string;
  test(url: string): boolean;
}

/**
 * Compiles one pattern (RE2 syntax, as in Go and Python's re without backreferences or lookaround).
 * @throws InvalidInputError `URL_PATTERN_INVALID` with RE2's reason.
 */
export function compileUrlPattern(source: string): UrlPattern {
  if (source.length === 0 || source.length > MAX_URL_PATTERN_LENGTH) {
    throw new InvalidInputError(
      'URL_PATTERN_INVALID',
      `a URL pattern has 1 to ${MAX_URL_PATTERN_LENGTH} characters (this one ${source.length})`,
    );
  }
  let compiled: RE2Class;
  try {
    compiled = new (re2())(source, 'u');
  } catch (err) {
    const reason =
      err instanceof Error ? err.message.replace(/^Invalid regular expression: /, '') : String(err);
    throw new InvalidInputError('URL_PATTERN_INVALID', `not a pattern RE2 takes: ${reason}`);
  }
  return { source, test: (url) => compiled.test(url) };
}

/** Why a pattern cannot be used, or null when it can. */
export function urlPatternProblem(source: string): string | null {
  try {
    compileUrlPattern(source);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** A job's URL patterns, compiled: a quick yes/no for every link, and the reason for `why`. */
export interface UrlFilter {
  /** True when the URL is followed (no exclude pattern found in it, and an include one if any). */
  admits(url: string): boolean;
  /** Why the URL is not followed, naming the pattern; null when it is. */
  problem(url: string): string | null;
}

/**
 * One pattern for a list: its patterns as alternatives, so a link costs one RE2 call per list
 * however many patterns it has (a call costs about 2 µs, most of it moving the URL into
 * WebAssembly's memory). Each pattern is a group of its own, so flags and alternations inside it
 * stay inside it.
 */
function anyOf(patterns: readonly UrlPattern[]): UrlPattern | null {
  if (patterns.length === 0) return null;
  if (patterns.length === 1) return patterns[0] as UrlPattern;
  const source = patterns.map((p) => `(?:${p.source})`).join('|');
  const compiled = new (re2())(source, 'u');
  return { source, test: (url) => compiled.test(url) };
}

/**
 * A job's `includeUrls` and `excludeUrls` as one check, or null when both are empty (nothing to
 * check). A URL must match some include pattern (when there are any) and no exclude pattern.
 * @throws InvalidInputError `URL_PATTERN_INVALID` for a pattern that does not compile.
 */
export function createUrlFilter(include: readonly string[], exclude: readonly string[]): UrlFilter | null {
  if (include.length === 0 && exclude.length === 0) return null;
  const includes = include.map(compileUrlPattern);
  const excludes = exclude.map(compileUrlPattern);
  const anyInclude = anyOf(includes);
  const anyExclude = anyOf(excludes);
  const admits = (url: string): boolean =>
    !(anyExclude?.test(url) ?? false) && (anyInclude?.test(url) ?? true);
  return {
    admits,
    problem: (url) => {
      if (admits(url)) return null;
      const excluded = excludes.find((pattern) => pattern.test(url));
      if (excluded) return `excluded: matches the excludeUrls pattern ${JSON.stringify(excluded.source)}`;
      const shown = includes
        .slice(0, 3)
        .map((p) => JSON.stringify(p.source))
        .join(', ');
      const more = includes.length > 3 ? `, … (${includes.length} in all)` : '';
      return `not included: matches none of the includeUrls patterns (${shown}${more})`;
    },
  };
}
