import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from '../../shared/errors.js';
import type { OutcomeHeader } from '../../shared/protocol/messages.js';
import { decodeOutcomeFrame, encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';

const header: OutcomeHeader = {
  type: 'outcome',
  taskId: '42',
  outcome: 'failed',
  failure: { code: 'HTTP_503', message: 'HTTP 503', retriable: true, status: 503, retryAfterMs: 2_000 },
  links: ['https://a.test/ü', 'https://a.test/2'],
};
const record = Buffer.from(JSON.stringify({ url: 'https://a.test/', body: 'héllo, 世界' }));

/** A frame built by hand: length prefix, header bytes, record bytes. */
function frame(head: Buffer | string, body: Buffer | string, declaredLength?: number): Buffer {
  const h = Buffer.from(head);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(declaredLength ?? h.length, 0);
  return Buffer.concat([prefix, h, Buffer.from(body)]);
}

function assertBadFrame(buffer: Buffer, message: RegExp): void {
  assert.throws(
    () => decodeOutcomeFrame(buffer),
    (err: unknown) => {
      assert.ok(err instanceof ProtocolError, 'a ProtocolError');
      assert.equal(err.code, 'BAD_FRAME');
      assert.equal(err.retriable, false);
      assert.match(err.message, message);
      return true;
    },
  );
}

describe('outcome frame', () => {
  test('a record given as its JSON text makes the same frame as its bytes, multi-byte characters included', () => {
    const text = record.toString('utf8');
    const fromText = encodeOutcomeFrame(header, text);
    assert.deepEqual(fromText, encodeOutcomeFrame(header, record));
    assert.deepEqual(decodeOutcomeFrame(fromText).record, record);
  });

  test('round trip: header and record bytes come back as sent', () => {
    const decoded = decodeOutcomeFrame(encodeOutcomeFrame(header, record));
    assert.deepEqual(decoded.header, header);
    assert.ok(decoded.record.equals(record));
  });

  test('round trip of an ok outcome without failure', () => {
    const ok: OutcomeHeader = { type: 'outcome', taskId: 't', outcome: 'ok', failure: null, links: [] };
    assert.deepEqual(decodeOutcomeFrame(encodeOutcomeFrame(ok, Buffer.from('{}'))).header, ok);
  });

  test('truncated frames', () => {
    assertBadFrame(Buffer.alloc(0), /shorter than its length prefix/);
    assertBadFrame(Buffer.from([0, 0, 1]), /shorter than its length prefix/);
    const full = encodeOutcomeFrame(header, record);
    const head = Buffer.byteLength(JSON.stringify(header));
    assertBadFrame(full.subarray(0, 4 + head - 1), /header length exceeds frame/);
    assertBadFrame(frame('{}', '{}', 0xffffffff), /header length exceeds frame/);
  });

  test('a header that is not JSON', () => {
    assertBadFrame(frame('{"type":"outcome",', '{}'), /not JSON/);
    assertBadFrame(frame('', '{}'), /not JSON/);
  });

  test('a header that fails the schema', () => {
    assertBadFrame(frame(JSON.stringify({ ...header, outcome: 'maybe' }), '{}'), /header invalid/);
    assertBadFrame(frame(JSON.stringify({ ...header, taskId: '' }), '{}'), /header invalid/);
    assertBadFrame(frame(JSON.stringify({ type: 'credit', n: 1 }), '{}'), /header invalid/);
    assertBadFrame(frame('null', '{}'), /header invalid/);
  });

  test('a record that is not one line of JSON', () => {
    const head = JSON.stringify(header);
    assertBadFrame(frame(head, '{"a":1}\n{"b":2}'), /one line of JSON/);
    assertBadFrame(frame(head, '{"a":1}\n'), /one line of JSON/);
    assertBadFrame(frame(head, '[1,2]'), /one line of JSON/);
    assertBadFrame(frame(head, ' {"a":1}'), /one line of JSON/);
    assertBadFrame(frame(head, ''), /one line of JSON/);
  });
});
