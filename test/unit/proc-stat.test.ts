import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { clockTicksPerSecond, pageSizeBytes, readAuxv } from '../../shared/os/proc-stat.js';

function auxv64(pairs: [number, number][], littleEndian: boolean): Buffer {
  const bytes = Buffer.alloc((pairs.length + 1) * 16);
  pairs.forEach(([type, value], i) => {
    if (littleEndian) {
      bytes.writeBigUInt64LE(BigInt(type), i * 16);
      bytes.writeBigUInt64LE(BigInt(value), i * 16 + 8);
    } else {
      bytes.writeBigUInt64BE(BigInt(type), i * 16);
      bytes.writeBigUInt64BE(BigInt(value), i * 16 + 8);
    }
  });
  return bytes;
}

test('the auxiliary vector is read as pairs of native words up to its end marker', () => {
  const pairs: [number, number][] = [
    [33, 0x7ffd_0000_1000], // AT_SYSINFO_EHDR: a 64-bit address
    [6, 4096],
    [17, 100],
  ];
  const little = readAuxv(auxv64(pairs, true), 8, true);
  assert.equal(little.get(6), 4096);
  assert.equal(little.get(17), 100);
  assert.equal(little.get(33), 0x7ffd_0000_1000);
  assert.deepEqual(readAuxv(auxv64(pairs, false), 8, false), little);

  const words32 = Buffer.alloc(24);
  [6, 16384, 17, 250, 0, 0].forEach((word, i) => words32.writeUInt32LE(word, i * 4));
  assert.deepEqual(
    [...readAuxv(words32, 4, true)],
    [
      [6, 16384],
      [17, 250],
    ],
  );

  const afterEnd = Buffer.concat([auxv64([[6, 4096]], true), auxv64([[17, 99]], true)]);
  assert.equal(readAuxv(afterEnd, 8, true).has(17), false, 'nothing after the AT_NULL entry is read');
});

test('this process reads the page size and clock ticks that getconf prints', () => {
  assert.equal(pageSizeBytes, Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' })));
  assert.equal(clockTicksPerSecond, Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })));
});
