import { describe, expect, it } from 'vitest';
import { judgeDepartures, type DepartureReading } from './departures.js';

const reading = (over: Partial<DepartureReading>): DepartureReading => ({
  at: 1_000,
  held: new Set(),
  expired: new Set(),
  owners: new Set(),
  leaseDurationMs: 15_000,
  ...over,
});

describe('judging members whose Lease is gone', () => {
  it.each([
    // [case, before, reading, departures after, holding]
    ['an owner whose Lease is held: its Lease judges it', [], { held: new Set(['a']), owners: new Set(['a']) }, [], []],
    ['an owner whose Lease vanished: holds its parts a lease duration from now', [], { owners: new Set(['a']) }, [['a', 16_000]], ['a']],
    ['still gone later: the first deadline stands', [['a', 16_000]], { at: 9_000, owners: new Set(['a']) }, [['a', 16_000]], ['a']],
    ['the deadline reached: stopped', [['a', 16_000]], { at: 16_000, owners: new Set(['a']) }, [['a', 16_000]], []],
    ['found expired: stopped already (at its renew deadline)', [], { expired: new Set(['a']), owners: new Set(['a']) }, [['a', 1_000]], []],
    ['a member that left released its parts: not an owner, nothing to wait for', [], { owners: new Set(['b']), held: new Set(['b']) }, [], []],
    ['its Lease made again (the replica restarted in its pod): judged by it', [['a', 16_000]], { held: new Set(['a']), owners: new Set(['a']) }, [], []],
    ['no longer an owner (its parts given away): forgotten', [['a', 16_000]], { at: 17_000, owners: new Set(['b']), held: new Set(['b']) }, [], []],
  ] as const)('%s', (_, before, over, departures, holding) => {
    const out = judgeDepartures(new Map(before.map(([m, t]) => [m, t])), reading(over as Partial<DepartureReading>));
    expect([...out.departures]).toEqual(departures);
    expect([...out.holding]).toEqual(holding);
  });
});
