/**
 * @module crc32c.test
 * CRC-32C against published vectors and a bitwise reference at every length and alignment.
 */
import { test, describe } from 'node:test';
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { crc32c } from './crc32c.js';

function bitwiseCrc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

void describe('crc32c', () => {
  void test('matches the standard check value and RFC 3720 vectors', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(new Uint8Array(0)), 0);
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
    assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
    assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e);
  });

  void test('slice-by-8 agrees with the bitwise definition at every length and alignment', () => {
    const data = randomBytes(300);
    for (let start = 0; start < 9; start++) {
      for (let len = 0; len < 100; len++) {
        const v = data.subarray(start, start + len);
        assert.equal(crc32c(v), bitwiseCrc32c(v), `start=${start} len=${len}`);
      }
    }
  });

  void test('chaining equals checksumming the concatenation', () => {
    const a = randomBytes(1234);
    const b = randomBytes(777);
    assert.equal(crc32c(b, crc32c(a)), crc32c(Buffer.concat([a, b])));
  });
});
