/**
 * The host key (`host[:port]`, as `hostOf` gives it) of a URL that `normalizeUrl` already produced,
 * read straight from the string. The scheduler runs this on every discovered link (hundreds of
 * thousands per crawl), where parsing each URL again would cost more than everything else it does
 * with the link. For input that is not normalised, use `hostOf`. Null when there is no `://`.
 */
export function hostOfNormalized(url: string): string | null {
  const start = url.indexOf('://');
  if (start < 0) return null;
  let end = url.length;
  for (let i = start + 3; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) {
      end = i;
      break;
    }
  }
  const authority = url.slice(start + 3, end);
  const at = authority.lastIndexOf('@');
  return at >= 0 ? authority.slice(at + 1) : authority;
}
