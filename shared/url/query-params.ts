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
 * writes such a URL. Path parameters of the same names go too (`/shop;jsessionid=A1?x=1` becomes
 * `/shop?x=1`: Java servers put the session there when a client takes no cookie). Works on
 * normalised URLs (the fragment is gone, percent-encoding settled), so a name is compared as
 * written there.
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
    const end = question < 0 ? url.length : question;
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    const semicolon = url.indexOf(';', pathStart);
    const base =
      pathStart >= 0 && semicolon >= 0 && semicolon < end
        ? `${url.slice(0, pathStart)}${stripPathParams(url.slice(pathStart, end), listed)}`
        : url.slice(0, end);
    if (question < 0) return base;
    const params = url.slice(question + 1).split('&');
    const kept = params.filter((param) => !listed(param));
    if (kept.length === 0) return base;
    return kept.length === params.length && base.length === end ? url : `${base}?${kept.join('&')}`;
  };
}

/** A path with its listed `;name=value` parameters removed from every segment. */
function stripPathParams(path: string, listed: (param: string) => boolean): string {
  return path
    .split('/')
    .map((segment) => {
      if (!segment.includes(';')) return segment;
      const [head, ...params] = segment.split(';');
      const kept = params.filter((param) => !listed(param));
      return kept.length === params.length ? segment : [head, ...kept].join(';');
    })
    .join('/');
}
