import type { RequestHeader } from '../../../shared/protocol/request-headers.js';
import { createHostLookup, type HostLookup } from '../../../shared/url/host-patterns.js';
import { hostKey } from '../../../shared/url/normalize.js';

/** Host keys whose headers are remembered; past it the memory starts again. */
const MEMORY = 1_000;

/**
 * A run's own request headers (`headers`), as a request to one URL gets them: for each name, the
 * value of the most specific entry whose host pattern matches the URL's host (an entry without a
 * host matches every host, least specifically). Each hop of a redirect asks again for its own URL,
 * so a header meant for one site never follows a redirect to another.
 */
export class RunHeaders {
  /** Every name the run sets, lower-case: a redirect drops them all before it adds its host's. */
  readonly names: readonly string[];
  private readonly byName: { name: string; fallback: string | undefined; lookup: HostLookup<string> }[];
  private readonly memo = new Map<string, Readonly<Record<string, string>>>();

  /** Null when the run sets none. */
  static of(headers: readonly RequestHeader[] | undefined): RunHeaders | null {
    return headers && headers.length > 0 ? new RunHeaders(headers) : null;
  }

  private constructor(headers: readonly RequestHeader[]) {
    const grouped = new Map<string, RequestHeader[]>();
    for (const header of headers) {
      const key = header.name.toLowerCase();
      grouped.set(key, [...(grouped.get(key) ?? []), header]);
    }
    this.names = [...grouped.keys()];
    this.byName = [...grouped].map(([name, entries]) => ({
      name,
      fallback: entries.find((e) => e.host === undefined)?.value,
      lookup: createHostLookup(
        entries.flatMap((e) => (e.host === undefined ? [] : [{ pattern: e.host, value: e.value }])),
      ),
    }));
  }

  /** The headers a request to `url` carries (names lower-case, as Node sends them). */
  forUrl(url: URL): Readonly<Record<string, string>> {
    const host = hostKey(url);
    let found = this.memo.get(host);
    if (found === undefined) {
      const headers: Record<string, string> = {};
      for (const { name, fallback, lookup } of this.byName) {
        const value = lookup(host) ?? fallback;
        if (value !== undefined) headers[name] = value;
      }
      if (this.memo.size >= MEMORY) this.memo.clear();
      this.memo.set(host, (found = headers));
    }
    return found;
  }

  /**
   * Headers of a redirect's next hop: the run's headers of the last hop taken out, those of the
   * next hop's host put in (got has already dropped `authorization` if the host changed; it comes
   * back only where the run names that host).
   */
  redirect(headers: Record<string, string | string[] | undefined>, next: URL): void {
    for (const name of this.names) delete headers[name];
    Object.assign(headers, this.forUrl(next));
  }
}
