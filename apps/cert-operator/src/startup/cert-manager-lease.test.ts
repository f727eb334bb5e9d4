import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MS, leaseVerdict } from './cert-manager-lease.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1_000).toISOString().replace('Z', '000Z'); // MicroTime, as the API server writes it
const lease = (spec: Record<string, unknown>) => ({ spec });

describe('leaseVerdict: does cert-manager still lead?', () => {
  it.each([
    ['no Lease at all', undefined, false],
    ['renewed 2 s ago, 60 s duration', lease({ holderIdentity: 'cm-1', renewTime: ago(2), leaseDurationSeconds: 60 }), true],
    ['renewed 59 s ago, 60 s duration', lease({ holderIdentity: 'cm-1', renewTime: ago(59), leaseDurationSeconds: 60 }), true],
    [
      'past its duration, within the skew allowed',
      lease({ holderIdentity: 'cm-1', renewTime: ago(60 + CLOCK_SKEW_MS / 1_000 - 1), leaseDurationSeconds: 60 }),
      true,
    ],
    ['expired: scaled to zero without releasing', lease({ holderIdentity: 'cm-1', renewTime: ago(120), leaseDurationSeconds: 60 }), false],
    ['released on shutdown (client-go empties the holder)', lease({ holderIdentity: '', renewTime: ago(1), leaseDurationSeconds: 1 }), false],
    ['acquired, not renewed yet', lease({ holderIdentity: 'cm-1', acquireTime: ago(3), leaseDurationSeconds: 60 }), true],
    ['a holder but no time at all', lease({ holderIdentity: 'cm-1' }), false],
    ['no duration: client-go default 15 s, renewed 10 s ago', lease({ holderIdentity: 'cm-1', renewTime: ago(10) }), true],
    ['a renewal from a clock ahead of ours', lease({ holderIdentity: 'cm-1', renewTime: ago(-3), leaseDurationSeconds: 60 }), true],
  ])('%s → held %s', (_name, l, held) => {
    expect(leaseVerdict(l, NOW).held).toBe(held);
  });

  it('says who holds it and for how long yet', () => {
    expect(leaseVerdict(lease({ holderIdentity: 'cm-1_abc', renewTime: ago(10), leaseDurationSeconds: 60 }), NOW)).toEqual({
      held: true,
      holder: 'cm-1_abc',
      renewedAgoMs: 10_000,
      expiresInMs: 50_000 + CLOCK_SKEW_MS,
    });
  });
});
