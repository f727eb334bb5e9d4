import { describe, expect, it } from 'vitest';
import { firstNameserver } from './resolver.js';

describe('firstNameserver', () => {
  it.each([
    [
      "a pod's resolv.conf: the cluster DNS Service",
      'search edge.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n',
      '10.96.0.10',
    ],
    ['the first of several', 'nameserver 10.0.0.2\nnameserver 10.0.0.3\n', '10.0.0.2'],
    ['IPv6, bracketed for nginx, without a zone', 'nameserver fe80::1%eth0\n', '[fe80::1]'],
    ['none', '# empty\nsearch example.com\n', undefined],
  ])('%s', (_n, text, want) => {
    expect(firstNameserver(text)).toBe(want);
  });
});
