import { describe, expect, it } from 'vitest';
import { x509, webcrypto } from '../pki/crypto-provider.js';
import { ARI_POLL, ariCertId, certIdOf, decodeRenewalInfo, nextCheckDelay, pointInWindow, RenewalInfoError } from './renewal-info.js';

const HOUR = 3_600_000;

describe('ariCertId (RFC 9773 §4.1)', () => {
  it("gives the RFC's example identifier", () => {
    expect(ariCertId('69:88:5B:6B:87:46:40:41:E1:B3:7B:84:7B:A0:AE:2C:DE:01:C8:D4', '00:87:65:43:21')).toBe('aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE');
  });
  it.each([
    ['a serial printed without its sign byte gets it back', '87654321', 'AIdlQyE'],
    ['a serial whose top bit is clear has no extra byte', '7f01', 'fwE'],
    ['an odd number of digits is padded', 'abc', 'Crw'],
    ['leading zero bytes beyond the sign byte are not DER', '0000000001', 'AQ'],
  ])('%s', (_name, serial, encoded) => {
    expect(ariCertId('01', serial).split('.')[1]).toBe(encoded);
  });
  it('refuses what is not hexadecimal', () => {
    expect(() => ariCertId('zz', '01')).toThrow(RenewalInfoError);
  });

  it('reads the key identifier and serial of a certificate, and refuses one without an Authority Key Identifier', async () => {
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const make = (extensions: x509.Extension[]) =>
      x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '00ff0102', name: 'CN=ari', keys, signingAlgorithm: alg, extensions });
    const withAki = await make([new x509.AuthorityKeyIdentifierExtension('69885b6b87464041e1b37b847ba0ae2cde01c8d4')]);
    expect(certIdOf(Buffer.from(withAki.rawData))).toBe('aYhba4dGQEHhs3uEe6CuLN4ByNQ.AP8BAg');
    const without = await make([]);
    expect(() => certIdOf(without.rawData)).toThrow(RenewalInfoError);
  });
});

describe('decodeRenewalInfo', () => {
  const window = { start: '2026-11-27T10:00:00Z', end: '2026-11-28T10:00:00.500Z' };
  it('decodes a window and an explanation, from text or parsed JSON', () => {
    const doc = { suggestedWindow: window, explanationURL: 'https://ca.example/why' };
    for (const body of [doc, JSON.stringify(doc), Buffer.from(JSON.stringify(doc))]) {
      expect(decodeRenewalInfo(body)).toEqual({
        window: { start: new Date('2026-11-27T10:00:00Z'), end: new Date('2026-11-28T10:00:00.500Z') },
        explanationURL: 'https://ca.example/why',
      });
    }
  });
  it('drops an explanation that is not a web address', () => {
    expect(decodeRenewalInfo({ suggestedWindow: window, explanationURL: 'javascript:alert(1)' }).explanationURL).toBeUndefined();
  });
  it.each<[string, unknown]>([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['no window', {}],
    ['a window that ends at its start', { suggestedWindow: { start: window.start, end: window.start } }],
    ['a window that ends before it starts', { suggestedWindow: { start: window.end, end: window.start } }],
    ['a date without a zone', { suggestedWindow: { start: '2026-11-27T10:00:00', end: window.end } }],
    ['a number for a time', { suggestedWindow: { start: 0, end: window.end } }],
    ['an impossible date', { suggestedWindow: { start: '2026-13-45T10:00:00Z', end: window.end } }],
    ['an enormous body', `{"suggestedWindow":${JSON.stringify(window)},"x":"${'a'.repeat(70_000)}"}`],
  ])('refuses %s', (_name, body) => {
    expect(() => decodeRenewalInfo(body)).toThrow(RenewalInfoError);
  });
});

describe('pointInWindow', () => {
  const w = { start: new Date('2026-11-27T10:00:00.250Z'), end: new Date('2026-11-28T10:00:00Z') };
  it('is inside the window, in whole seconds, and the same for the same Certificate', () => {
    const a = pointInWindow(w, 'uid-a');
    expect(a.getTime()).toBeGreaterThanOrEqual(w.start.getTime());
    expect(a.getTime()).toBeLessThan(w.end.getTime());
    expect(pointInWindow(w, 'uid-a')).toEqual(a);
  });
  it('spreads Certificates across the window, its end left for the queue: the last tenth, at most 10 minutes', () => {
    // A day's window: its last 10 minutes are left. The bench's 360 s window: its last 36 s (where
    // renewals queued behind others under load started up to 20.7 s after the end).
    for (const [window, left] of [
      [w, 10 * 60_000],
      [{ start: new Date('2026-11-27T10:00:00Z'), end: new Date('2026-11-27T10:06:00Z') }, 36_000],
    ] as const) {
      const span = window.end.getTime() - window.start.getTime() - left;
      const spans = Array.from({ length: 1000 }, (_, i) => (pointInWindow(window, `uid-${i}`).getTime() - window.start.getTime()) / span);
      expect(Math.max(...spans)).toBeLessThan(1);
      for (const quarter of [0, 1, 2, 3]) {
        const inside = spans.filter((f) => f >= quarter / 4 && f < (quarter + 1) / 4).length;
        expect(inside).toBeGreaterThan(200);
        expect(inside).toBeLessThan(300);
      }
    }
  });
  it('moves when the CA moves the window', () => {
    const moved = { start: new Date('2026-11-26T00:00:00Z'), end: new Date('2026-11-26T00:00:01Z') };
    expect(pointInWindow(moved, 'uid-a')).toEqual(moved.start);
  });
});

describe('nextCheckDelay', () => {
  it.each<[string, number | undefined, number, number]>([
    ['no Retry-After: the default, spread by a tenth', undefined, 0.9 * ARI_POLL.defaultMs, 1.1 * ARI_POLL.defaultMs],
    ['Retry-After 0: as none', 0, 0.9 * ARI_POLL.defaultMs, 1.1 * ARI_POLL.defaultMs],
    ['Retry-After of 2 hours', 2 * HOUR, 1.8 * HOUR, 2.2 * HOUR],
    ['a few seconds: an hour', 5_000, HOUR, HOUR],
    ['a year: a day', 365 * 24 * HOUR, 21.6 * HOUR, 24 * HOUR],
  ])('%s', (_name, retryAfter, min, max) => {
    for (const seed of ['a', 'b', 'c', 'd']) {
      const d = nextCheckDelay(retryAfter, seed);
      expect(d).toBeGreaterThanOrEqual(min);
      expect(d).toBeLessThanOrEqual(max);
      expect(nextCheckDelay(retryAfter, seed)).toBe(d);
    }
  });
});
