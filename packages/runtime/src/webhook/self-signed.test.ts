import { X509Certificate } from 'node:crypto';
import { createServer, connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { issueCa, issueServing } from './self-signed.js';

const now = Date.UTC(2026, 10, 24, 9, 0, 0);
const day = 86_400_000;

describe('self-signed certificates', () => {
  const ca = issueCa('memcached-operator-webhook-ca', now, now + 365 * day);
  const leaf = issueServing(ca, ['memcached-operator-webhook.ops.svc', '127.0.0.1', '::1'], now, now + 90 * day);

  it('issues a CA that OpenSSL reads as a CA, valid for the span asked', () => {
    const c = new X509Certificate(ca.cert);
    expect(c.ca).toBe(true);
    expect(c.subject).toBe('CN=memcached-operator-webhook-ca');
    expect(new Date(c.validFrom).getTime()).toBe(now);
    expect(new Date(c.validTo).getTime()).toBe(now + 365 * day);
    expect(c.verify(c.publicKey)).toBe(true);
  });

  it('issues a serving certificate signed by the CA, for its DNS names and IPs', () => {
    const c = new X509Certificate(leaf.cert);
    expect(c.ca).toBe(false);
    expect(c.checkIssued(new X509Certificate(ca.cert))).toBe(true);
    expect(c.verify(new X509Certificate(ca.cert).publicKey)).toBe(true);
    expect(c.subjectAltName).toBe('DNS:memcached-operator-webhook.ops.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(c.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(c.checkHost('memcached-operator-webhook.ops.svc')).toBe('memcached-operator-webhook.ops.svc');
    expect(c.checkIP('127.0.0.1')).toBe('127.0.0.1');
  });

  it('uses GeneralizedTime from 2050 on', () => {
    const late = issueCa('late', Date.UTC(2049, 0, 1), Date.UTC(2051, 5, 1, 12, 30, 15));
    expect(new Date(new X509Certificate(late.cert).validTo).getTime()).toBe(Date.UTC(2051, 5, 1, 12, 30, 15));
  });

  it('serves TLS that a client trusting only the CA accepts, and one trusting another CA refuses', async () => {
    const current = issueServing(ca, ['localhost', '127.0.0.1'], Date.now() - 60_000, Date.now() + day);
    const server = createServer({ cert: current.cert, key: current.key }, (s) => s.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const talk = (caPem: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, ca: caPem, servername: 'localhost' }, () => s.on('data', (d) => resolve(String(d))));
        s.on('error', reject);
      });
    try {
      expect(await talk(ca.cert)).toBe('ok');
      await expect(talk(issueCa('other', now, now + day).cert)).rejects.toThrow(/self-signed|unable to verify|certificate/i);
    } finally {
      server.close();
    }
  });
});
