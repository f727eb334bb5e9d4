import { describe, expect, it } from 'vitest';
import type { ChallengeObject } from '../../api/acme/v1/challenge.js';
import { ChallengeScheduler } from './scheduler.js';

const ch = (name: string, dnsName: string, status?: ChallengeObject['status']): ChallengeObject =>
  ({ metadata: { name, namespace: 'ns' }, spec: { dnsName, type: 'HTTP-01' }, status }) as ChallengeObject;

describe('ChallengeScheduler', () => {
  it('never admits two challenges for one domain at once', () => {
    const s = new ChallengeScheduler(10);
    const a = ch('a', 'www.example.com');
    const b = ch('b', 'www.example.com');
    expect(s.admit(a, [a, b]).ok).toBe(true);
    expect(s.admit(b, [a, b])).toEqual({ ok: false, reason: 'waiting: the challenge ns/a for www.example.com is in progress' });
    // Still blocked once a's processing flag is in the cache and the reservation released.
    s.release({ namespace: 'ns', name: 'a' });
    const aProcessing = ch('a', 'www.example.com', { processing: true, state: 'pending' });
    expect(s.admit(b, [aProcessing, b]).ok).toBe(false);
    // a ends: b may go.
    expect(s.admit(b, [ch('a', 'www.example.com', { processing: true, state: 'valid' }), b]).ok).toBe(true);
  });

  it('caps the number processed at once, counting reservations not yet in the cache', () => {
    const s = new ChallengeScheduler(2);
    const all = ['a', 'b', 'c'].map((n) => ch(n, `${n}.example.com`));
    expect(s.admit(all[0]!, all).ok).toBe(true);
    expect(s.admit(all[1]!, all).ok).toBe(true);
    expect(s.admit(all[2]!, all)).toEqual({ ok: false, reason: 'waiting: 2 challenges are being processed (limit 2)' });
    s.release({ namespace: 'ns', name: 'a' }); // a vanished before it showed as processing
    expect(s.admit(all[2]!, all).ok).toBe(true);
  });

  it('does not count a challenge against itself when it is admitted again', () => {
    const s = new ChallengeScheduler(1);
    const a = ch('a', 'a.example.com', { processing: true });
    expect(s.admit(a, [a]).ok).toBe(true);
  });
});
