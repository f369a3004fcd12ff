import { isLoopbackAddress } from '../../shared/http/request-guards.js';

/**
 * The masking of the frames a crawler sends (ws's `generateMask`), for a scheduler URL.
 *
 * A WebSocket client masks its frames (RFC 6455 §5.3) so that a proxy on the path that does not
 * speak WebSocket cannot be fed bytes a stranger chose, and page bodies are chosen by strangers.
 * No such proxy can read a TLS connection or one that never leaves the machine, so there the mask
 * is all zeros, which ws on both sides recognises and skips: no pass over every body to mask it,
 * none to unmask it, and no copy of the frame. Elsewhere (`ws://` across a network) frames keep
 * ws's random mask (undefined: ws's default).
 */
export function frameMaskFor(schedulerUrl: string): ((mask: Buffer) => void) | undefined {
  let url: URL;
  try {
    url = new URL(schedulerUrl);
  } catch {
    return undefined;
  }
  if (url.protocol === 'wss:' || isLoopbackAddress(url.hostname)) return zeroMask;
  return undefined;
}

function zeroMask(mask: Buffer): void {
  mask.fill(0);
}
