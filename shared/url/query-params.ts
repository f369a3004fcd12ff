/** Longest parameter name a job may list (a trailing `*` included). */
export const MAX_QUERY_PARAM_NAME = 200;
/** Names a job may list at most. */
export const MAX_QUERY_PARAMS = 200;

/** A name as a job lists it: no `&`, `=`, `#`, `?` or white space; a `*` only at its end. */
export const QUERY_PARAM_NAME = /^[^&=#?*\s]+\*?$/;

/** Removes a job's listed parameters from a normalised URL; returns it unchanged when none is there. */
export type QueryStripper = (url: string) => string;

/**
 * The stripper of a job's `stripQueryParams`, or null when the list is empty. A name matches a
 * parameter whatever its case (`jsessionid` strips `JSESSIONID` too: servers and frameworks spell
 * session ids both ways); `utm_*` matches every name that starts with `utm_`. What is left of the
 * query keeps its order and spelling, and a query left empty goes with its `?`, as the normaliser
 * writes such a URL. Works on normalised URLs (the fragment is gone, percent-encoding settled), so a
 * name is compared as written there.
 */
export function createQueryStripper(names: readonly string[]): QueryStripper | null {
  if (names.length === 0) return null;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const name of names) {
    const lower = name.toLowerCase();
    if (lower.endsWith('*')) prefixes.push(lower.slice(0, -1));
    else exact.add(lower);
  }
  const listed = (param: string): boolean => {
    const equals = param.indexOf('=');
    const name = (equals < 0 ? param : param.slice(0, equals)).toLowerCase();
    return exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
  };
  return (url) => {
    const question = url.indexOf('?');
    if (question < 0) return url;
    const params = url.slice(question + 1).split('&');
    const kept = params.filter((param) => !listed(param));
    if (kept.length === params.length) return url;
    return kept.length === 0 ? url.slice(0, question) : `${url.slice(0, question + 1)}${kept.join('&')}`;
  };
}
