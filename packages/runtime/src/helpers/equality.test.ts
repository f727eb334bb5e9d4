import { describe, expect, it } from 'vitest';
import { contentHash } from './apply.js';
import { deepEqual, isSubset } from './equality.js';

describe('isSubset (drift detection against server-defaulted objects)', () => {
  const actual = {
    spec: {
      replicas: 3,
      template: {
        spec: {
          containers: [
            {
              name: 'm',
              image: 'memcached:1.6',
              imagePullPolicy: 'IfNotPresent',
              ports: [{ containerPort: 11211, protocol: 'TCP' }],
              resources: { limits: { cpu: '1' } },
            },
          ],
        },
      },
    },
  };
  it('ignores fields the server defaulted', () => {
    expect(
      isSubset(
        { spec: { replicas: 3, template: { spec: { containers: [{ name: 'm', image: 'memcached:1.6', ports: [{ containerPort: 11211 }] }] } } } },
        actual,
      ),
    ).toBe(true);
  });
  it('sees a changed value, and a list of a different length', () => {
    expect(isSubset({ spec: { replicas: 1 } }, actual)).toBe(false);
    expect(isSubset({ spec: { template: { spec: { containers: [] } } } }, actual)).toBe(false);
  });
  it('treats a number and its quantity string as equal', () => {
    expect(isSubset({ spec: { template: { spec: { containers: [{ resources: { limits: { cpu: 1 } } }] } } } }, actual)).toBe(true);
  });
});

describe('deepEqual and contentHash', () => {
  it('ignore key order and undefined fields', () => {
    expect(deepEqual({ a: 1, b: [1, { c: 2 }], d: undefined }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
  });
});
