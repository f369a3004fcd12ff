/**
 * Whether a response's `Content-Type` says HTML, i.e. whether it is worth running the link extractor.
 *
 * Only the media type counts (parameters such as `charset` are ignored) and it is compared case-
 * insensitively, as RFC 9110 requires. A missing header answers false: sniffing a body is a decision
 * for the fetcher, not for this check.
 */
export function isHtmlContentType(contentType: string | null | undefined): boolean {
  if (contentType == null) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}
