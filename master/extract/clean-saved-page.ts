import { InvalidInputError } from '../../shared/errors.js';
import { encodeBody } from '../../shared/text/body-encoding.js';
import { cleanHtml } from './clean-html.js';
import type { CleanedPage } from './cleaned-page.js';

/**
 * Cleans a page saved to disk: its bytes are decoded as the crawler decodes a fetched body
 * (shared/text/body-encoding.ts: byte order mark, `<meta charset>`, else UTF-8 or windows-1252),
 * as `text/html`, then cleaned as the consumer cleans a record's body.
 */
export function cleanSavedPage(bytes: Buffer, url: string | null): CleanedPage {
  const decoded = encodeBody(bytes, 'text/html');
  if (decoded.encoding !== 'utf8') {
    throw new InvalidInputError(
      'EXTRACT_BINARY_BODY',
      'the file cannot be decoded as text in any charset it names',
    );
  }
  return cleanHtml(decoded.body, url);
}
