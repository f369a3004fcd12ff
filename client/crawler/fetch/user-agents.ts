/**
 * The User-Agent of each request. With a rotation list, requests take its entries in turn (per
 * request, round robin, in this process); without one, every request sends the job's `userAgent`.
 * Either way `userAgent` stays the crawl's identity: robots.txt is matched against it.
 */
export function createUserAgentRotation(settings: {
  userAgent: string;
  userAgents?: readonly string[] | undefined;
}): () => string {
  const list = settings.userAgents?.filter((ua) => ua.length > 0) ?? [];
  if (list.length === 0) return () => settings.userAgent;
  let next = 0;
  return () => {
    const ua = list[next % list.length] as string;
    next = (next + 1) % list.length;
    return ua;
  };
}
