import { describe, expect, it } from 'vitest';
import { daemonConfig, release } from './engine.js';

describe('release: the last live holder of the engine opkit started stops it', () => {
  const alive = (pids: number[]) => (p: number) => pids.includes(p);
  it.each([
    // npm test's driver (100) holds it; a suite's vitest teardown (300) lets go: it must keep running.
    ['a teardown that never held it, while the driver does', [100, 201], 300, [100, 300], { stop: false, users: [100] }],
    ["the driver, last, once the suites' workers are gone", [100, 201, 202], 100, [100], { stop: true, users: [] }],
    ['a suite alone: its worker is gone when its teardown runs', [201], 300, [300], { stop: true, users: [] }],
    ["two suites at once: the first one done leaves the other's", [201, 202], 301, [202, 301], { stop: false, users: [202] }],
  ])('%s', (_n, users, user, living, want) => {
    expect(release(users, user, alive(living))).toEqual(want);
  });
});

describe('daemonConfig', () => {
  it('makes the capability-removing shim the default runtime only where capabilities are withheld', () => {
    expect(daemonConfig({ withheldCapabilities: [], cgroupV1: true }, undefined, '/usr/sbin/runc')).toEqual({});
    expect(daemonConfig({ withheldCapabilities: ['CAP_SYS_RESOURCE'], cgroupV1: true }, '/cache/runc-shim', '/usr/sbin/runc')).toEqual({
      runtimes: { 'opkit-runc': { path: '/cache/runc-shim', runtimeArgs: ['--opkit-runc=/usr/sbin/runc', '--opkit-drop-caps=CAP_SYS_RESOURCE'] } },
      'default-runtime': 'opkit-runc',
    });
  });
});
