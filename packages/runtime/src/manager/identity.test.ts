import { describe, expect, it } from 'vitest';
import { operatorEnvironment } from './environment.js';
import { leaderIdentity } from './manager.js';

describe('leaderIdentity', () => {
  it('is the pod name and uid in a pod: a restarted container takes its own lease back at once', () => {
    const env = { POD_NAME: 'op-7d9f-x2k', POD_UID: '0b5e…' };
    expect(leaderIdentity(operatorEnvironment(env))).toBe('op-7d9f-x2k_0b5e…');
    expect(leaderIdentity(operatorEnvironment(env))).toBe(leaderIdentity(operatorEnvironment(env)));
  });

  it('is unique per process elsewhere', () => {
    expect(leaderIdentity(operatorEnvironment({ POD_NAME: 'dev' }))).toMatch(/^dev_[0-9a-f]{8}$/);
    expect(leaderIdentity(operatorEnvironment({}))).not.toBe(leaderIdentity(operatorEnvironment({})));
  });
});
