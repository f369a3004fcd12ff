import { isUtf8 } from 'node:buffer';
import { getBOMEncoding, labelToName } from '@exodus/bytes/encoding.js';
import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';

/** Where a body's character encoding came from, in the order the WHATWG algorithm tries them. */
export type CharsetSource = 'bom' | 'header' | 'meta' | 'xml' | 'default';

export interface Charset {
  /** The WHATWG Encoding Standard name (`UTF-8`, `GBK`, `Shift_JIS`, `windows-1251`, ...). */
  name: string;
  source: CharsetSource;
}

/** How many leading bytes the HTML prescan reads, as in the HTML standard. */
const PRESCAN_BYTES = 1024;

/** The charset parameter of a Content-Type value, as written (a label, not yet a name). */
export function charsetOf(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  const match = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType);
  return match ? (match[1] as string).toLowerCase() : null;
}

/**
 * The character encoding of a text body, found as the WHATWG encoding sniffing algorithm finds it
 * (https://html.spec.whatwg.org/multipage/parsing.html#encoding-sniffing-algorithm):
 *
 * 1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE) wins over everything;
 * 2. then the `charset` of the Content-Type header, if it is a known label;
 * 3. then, for HTML and XML only, a prescan of the first 1024 bytes for `<meta charset=...>`,
 *    `<meta http-equiv="Content-Type" content="...; charset=...">` or an XML declaration's
 *    `encoding`; a meta that says UTF-16 means UTF-8, as the standard says (the bytes were evidently
 *    ASCII-compatible enough to read the meta);
 * 4. else UTF-8 when the bytes are valid UTF-8, and windows-1252 otherwise (what browsers in most
 *    locales assume for an unlabelled legacy page).
 *
 * Labels map to names the WHATWG way: `gb2312`, `gbk`, `x-gbk` and `chinese` are GBK; `x-sjis` is
 * Shift_JIS; `latin1` and `iso-8859-1` are windows-1252; unknown labels are ignored (the next step
 * decides). The prescan is encoding-sniffer's (the one cheerio uses).
 */
export function detectCharset(
  body: Uint8Array,
  contentType: string | null | undefined,
  options: { markup: boolean; fallback?: string | undefined },
): Charset {
  const bom = getBOMEncoding(body);
  if (bom !== null) return { name: labelToName(bom) ?? 'UTF-8', source: 'bom' };
  const label = charsetOf(contentType);
  const declared = label === null ? null : labelToName(label);
  if (declared !== null) return { name: declared, source: 'header' };
  if (options.markup) {
    // Only now the prescan, which costs more than the rest together: most servers name the charset.
    const sniffer = new Sniffer({ maxBytes: PRESCAN_BYTES });
    sniffer.write(body.subarray(0, PRESCAN_BYTES));
    const source = sourceOf(sniffer.resultType);
    if (source !== 'default') return { name: sniffer.encoding, source };
  }
  return { name: isUtf8(body) ? 'UTF-8' : (options.fallback ?? 'windows-1252'), source: 'default' };
}

function sourceOf(result: ResultType): CharsetSource {
  switch (result) {
    case ResultType.BOM:
      return 'bom';
    case ResultType.PASSED:
      return 'header';
    case ResultType.META_TAG:
      return 'meta';
    case ResultType.XML_PREFIX:
    case ResultType.XML_ENCODING:
      return 'xml';
    case ResultType.DEFAULT:
      return 'default';
  }
}
