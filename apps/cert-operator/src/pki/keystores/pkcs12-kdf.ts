import { createHash } from 'node:crypto';
import { utf16be } from '../der.js';

/** The password as PKCS#12 key derivation takes it: a BMPString with its two-byte terminator. */
export const bmpPassword = (password: string) => Buffer.concat([utf16be(password), Buffer.alloc(2)]);

const BLOCK = { sha1: 64, sha256: 64 } as const;

/**
 * RFC 7292 appendix B.2: the key (id 1), IV (id 2) or MAC key (id 3) for a password and salt.
 * Still what PKCS#12 MACs use, even in files whose bags are encrypted with PBES2.
 */
export function pkcs12Kdf(hash: 'sha1' | 'sha256', password: Buffer, salt: Buffer, id: 1 | 2 | 3, iterations: number, size: number): Buffer {
  const v = BLOCK[hash];
  const fill = (src: Buffer) => {
    if (!src.length) return Buffer.alloc(0);
    const out = Buffer.alloc(v * Math.ceil(src.length / v));
    for (let i = 0; i < out.length; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const D = Buffer.alloc(v, id);
  const I = Buffer.concat([fill(salt), fill(password)]);
  const chunks: Buffer[] = [];
  let produced = 0;
  while (produced < size) {
    let A = createHash(hash).update(D).update(I).digest();
    for (let i = 1; i < iterations; i++) A = createHash(hash).update(A).digest();
    chunks.push(A);
    produced += A.length;
    if (produced >= size) break;
    // I_j = (I_j + B + 1) mod 2^(8v), B being A repeated to v bytes.
    const B = Buffer.alloc(v);
    for (let i = 0; i < v; i++) B[i] = A[i % A.length]!;
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[j + k]! + B[k]! + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(chunks).subarray(0, size);
}
