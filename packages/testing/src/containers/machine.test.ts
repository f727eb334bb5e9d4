import { describe, expect, it } from 'vitest';
import { machineQuirks, readMachineFacts } from './machine.js';

describe('machineQuirks', () => {
  const all = (last: number) => (1n << BigInt(last + 1)) - 1n;
  it.each([
    [
      'a full bounding set on cgroup v2 needs nothing',
      { capBnd: all(40), capLastCap: 40, cgroup: 'v2' as const },
      { withheldCapabilities: [], cgroupV1: false },
    ],
    // The Firecracker VMs this project is developed on: CapBnd 000001fffeffffff, a cgroup v1 tmpfs.
    [
      'a withheld CAP_SYS_RESOURCE on cgroup v1',
      { capBnd: 0x1fffeffffffn, capLastCap: 40, cgroup: 'v1' as const },
      { withheldCapabilities: ['CAP_SYS_RESOURCE'], cgroupV1: true },
    ],
    ['bits above cap_last_cap are not capabilities', { capBnd: all(37), capLastCap: 37, cgroup: 'v2' as const }, { withheldCapabilities: [], cgroupV1: false }],
    [
      'several withheld',
      { capBnd: all(40) & ~(1n << 21n) & ~(1n << 12n), capLastCap: 40, cgroup: 'v2' as const },
      { withheldCapabilities: ['CAP_NET_ADMIN', 'CAP_SYS_ADMIN'], cgroupV1: false },
    ],
  ])('%s', (_name, facts, want) => {
    expect(machineQuirks(facts)).toEqual(want);
  });

  it('reads this machine', () => {
    const facts = readMachineFacts();
    expect(facts.capLastCap).toBeGreaterThanOrEqual(37);
    expect(['v1', 'v2']).toContain(facts.cgroup);
    // Whatever this machine withholds, this process cannot have it.
    for (const cap of machineQuirks(facts).withheldCapabilities) expect(cap).toMatch(/^CAP_[A-Z_]+$/);
  });
});
