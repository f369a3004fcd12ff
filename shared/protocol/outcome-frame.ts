import { ProtocolError } from '../errors.js';
import { outcomeHeaderSchema, type OutcomeHeader } from './messages.js';

/**
 * Binary outcome frame: a 4-byte big-endian header length, the header as JSON, then the page record
 * as one line of JSON. The scheduler validates the header and hands the record bytes to the sink as
 * they are, which spares it parsing and re-serialising every body. A record given as its JSON text
 * is encoded straight into the frame (no buffer of its own to copy).
 */
export function encodeOutcomeFrame(header: OutcomeHeader, record: Buffer | string): Buffer {
  const head = JSON.stringify(header);
  const headLength = Buffer.byteLength(head);
  const recordLength = typeof record === 'string' ? Buffer.byteLength(record) : record.length;
  const frame = Buffer.allocUnsafe(4 + headLength + recordLength);
  frame.writeUInt32BE(headLength, 0);
  frame.write(head, 4);
  if (typeof record === 'string') frame.write(record, 4 + headLength);
  else record.copy(frame, 4 + headLength);
  return frame;
}

export interface DecodedOutcome {
  header: OutcomeHeader;
  record: Buffer;
}

export function decodeOutcomeFrame(frame: Buffer): DecodedOutcome {
  if (frame.length < 4) throw new ProtocolError('BAD_FRAME', 'outcome frame shorter than its length prefix');
  const headLength = frame.readUInt32BE(0);
  if (headLength > frame.length - 4)
    throw new ProtocolError('BAD_FRAME', 'outcome header length exceeds frame');
  let raw: unknown;
  try {
    raw = JSON.parse(frame.subarray(4, 4 + headLength).toString('utf8'));
  } catch (err) {
    throw new ProtocolError('BAD_FRAME', 'outcome header is not JSON', { cause: err });
  }
  const parsed = outcomeHeaderSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ProtocolError('BAD_FRAME', `outcome header invalid: ${parsed.error.issues[0]?.message ?? ''}`);
  }
  const record = frame.subarray(4 + headLength);
  if (record.length === 0 || record[0] !== 0x7b /* { */ || record.includes(0x0a /* \n */)) {
    throw new ProtocolError('BAD_FRAME', 'outcome record must be one line of JSON');
  }
  return { header: parsed.data, record };
}
