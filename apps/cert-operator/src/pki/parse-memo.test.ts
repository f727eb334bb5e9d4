import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCSR, parseCSR } from './csr.js';
import { inspectCertificate } from './inspect.js';
import { encodePrivateKey, parsePrivateKey, publicKeyDer } from './keys.js';
import { objectMemo, textMemo } from './parse-memo.js';
import { selfSign } from './sign.js';

const counting = () => {
  const calls: string[] = [];
  return { calls, parse: (t: string) => (calls.push(t), { parsed: t }) };
};

describe('textMemo', () => {
  it('parses a text once and hands out the same result', () => {
    const c = counting();
    const parse = textMemo(4, 100, c.parse);
    expect(parse('a')).toBe(parse('a'));
    expect(c.calls).toEqual(['a']);
  });

  it('forgets the least recently used first', () => {
    const c = counting();
    const parse = textMemo(2, 100, c.parse);
    parse('a');
    parse('b');
    parse('a'); // a is now the most recent: b goes when c comes
    parse('c');
    parse('a');
    parse('b');
    expect(c.calls).toEqual(['a', 'b', 'c', 'b']);
  });

  it('never keeps a text over its bound (a tenant cannot fill the memory with oversized objects)', () => {
    const c = counting();
    const parse = textMemo(4, 3, c.parse);
    parse('long');
    parse('long');
    parse('abc');
    parse('abc');
    expect(c.calls).toEqual(['long', 'long', 'abc']);
  });

  it('keeps no failure: a text that does not parse throws again', () => {
    let calls = 0;
    const parse = textMemo(4, 100, (t: string) => {
      calls++;
      throw new Error(`bad ${t}`);
    });
    expect(() => parse('x')).toThrow('bad x');
    expect(() => parse('x')).toThrow('bad x');
    expect(calls).toBe(2);
  });
});

describe('objectMemo', () => {
  it('derives once per object, again for another object', () => {
    let calls = 0;
    const derive = objectMemo((o: { n: number }) => (calls++, o.n * 2));
    const a = { n: 1 };
    expect([derive(a), derive(a), derive({ n: 1 })]).toEqual([2, 2, 2]);
    expect(calls).toBe(2);
  });
});

describe('the parses the operator memoizes', () => {
  const pem = encodePrivateKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'PKCS8');

  it('a key: one KeyObject per PEM, its public key derived once', async () => {
    const key = parsePrivateKey(pem);
    expect(parsePrivateKey(pem)).toBe(key);
    expect(publicKeyDer(key)).toBe(publicKeyDer(key));
    // Another key is another parse, whatever was kept before.
    const other = encodePrivateKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'PKCS8');
    expect(publicKeyDer(parsePrivateKey(other)).equals(publicKeyDer(key))).toBe(false);
  });

  it('a certificate: read once, frozen, so no caller can change what the next one reads', async () => {
    const key = parsePrivateKey(pem);
    const csr = await parseCSR(await createCSR({ commonName: 'memo.example', dnsNames: ['memo.example'] } as never, key));
    const { certificate } = await selfSign({ csr, durationMs: 3_600_000, isCA: false, usages: ['digital signature'] }, key);
    const info = inspectCertificate(certificate);
    expect(inspectCertificate(certificate)).toBe(info);
    expect(Object.isFrozen(info)).toBe(true);
    expect(info.dnsNames).toEqual(['memo.example']);
    expect(info.publicKeyDer.equals(publicKeyDer(key))).toBe(true);
  });
});
