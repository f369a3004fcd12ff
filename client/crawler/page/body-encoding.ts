/**
 * How a body is stored in its record: text when the content type is textual and its charset can
 * be decoded, base64 otherwise, so the record always holds the exact bytes or a faithful text.
 */
const TEXTUAL =
  /^(text\/|application\/(xhtml\+xml|xml|json|ld\+json|javascript|rss\+xml|atom\+xml)|[^;]*\+xml)/i;

export function charsetOf(contentType: string | null): string | null {
  if (!contentType) return null;
  const match = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType);
  return match ? (match[1] as string).toLowerCase() : null;
}

export function encodeBody(
  body: Buffer,
  contentType: string | null,
): { body: string; encoding: 'utf8' | 'base64' } {
  const textual = contentType === null ? looksLikeText(body) : TEXTUAL.test(contentType);
  if (textual) {
    const charset = charsetOf(contentType) ?? 'utf-8';
    if (charset === 'utf-8' || charset === 'utf8' || charset === 'us-ascii') {
      return { body: body.toString('utf8'), encoding: 'utf8' };
    }
    try {
      return { body: new TextDecoder(charset).decode(body), encoding: 'utf8' };
    } catch {
      // Unknown charset: keep the exact bytes.
    }
  }
  return { body: body.toString('base64'), encoding: 'base64' };
}

function looksLikeText(body: Buffer): boolean {
  const head = body.subarray(0, 512);
  return !head.includes(0) && /^\s*</.test(head.toString('latin1'));
}
