import { TextDecoder } from '@exodus/bytes/encoding.js';
import { detectCharset, type Charset } from './charset.js';
import { isHtmlMediaType, isTextualMediaType, isXmlMediaType, mediaTypeOf } from './media-type.js';

export { charsetOf } from './charset.js';

/** A body as its record stores it. */
export interface EncodedBody {
  /** The decoded text (`utf8`), or the exact bytes in base64. */
  body: string;
  encoding: 'utf8' | 'base64';
  /** The charset the text was decoded from; null for base64. */
  charset: Charset | null;
}

/**
 * How a body is stored in its record: text, decoded from its charset (see `detectCharset`), when its
 * media type is textual; the exact bytes in base64 otherwise (PDF, images, archives, octet-stream)
 * and when no decoder exists for the charset (the `replacement` encoding of ISO-2022-KR, HZ, ...).
 *
 * Decoding is the WHATWG Encoding Standard's, non-fatal (invalid sequences become U+FFFD) and BOM-
 * stripping, through @exodus/bytes, which passes the standard's test suite: iconv-lite and Node's
 * ICU decoders both differ from the standard on thousands of Big5, EUC-KR and Shift_JIS sequences.
 *
 * `mediaType` is the essence to treat the body as; by default the Content-Type's, or sniffed.
 */
export function encodeBody(
  body: Buffer,
  contentType: string | null,
  mediaType: string = mediaTypeOf(contentType, body).essence,
  /** The crawl's charset for unlabelled bytes that are not UTF-8; windows-1252 unless given. */
  fallback?: string,
): EncodedBody {
  if (isTextualMediaType(mediaType)) {
    const markup = isHtmlMediaType(mediaType) || isXmlMediaType(mediaType);
    const charset = detectCharset(body, contentType, { markup, fallback });
    const text = decode(body, charset.name);
    if (text !== null) return { body: text, encoding: 'utf8', charset };
  }
  return { body: body.toString('base64'), encoding: 'base64', charset: null };
}

const decoders = new Map<string, InstanceType<typeof TextDecoder> | null>();

/** `body` decoded from the encoding `name`, or null when there is no decoder for it. */
export function decode(body: Uint8Array, name: string): string | null {
  if (name === 'UTF-8') {
    const bom = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
    // Node's UTF-8 decoder replaces invalid sequences exactly as the standard's does, and is native.
    return Buffer.from(
      body.buffer,
      body.byteOffset + (bom ? 3 : 0),
      body.byteLength - (bom ? 3 : 0),
    ).toString('utf8');
  }
  let decoder = decoders.get(name);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(name);
    } catch {
      decoder = null; // `replacement`: no text can be recovered.
    }
    decoders.set(name, decoder);
  }
  return decoder === null ? null : decoder.decode(body);
}
