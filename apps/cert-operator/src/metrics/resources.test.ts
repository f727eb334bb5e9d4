import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ChallengeObject } from '../api/acme/v1/challenge.js';
import { challengeLabels, readyStatus, registerChallengeMetrics, registerIssuerMetrics } from './resources.js';

const issuer = (name: string, status?: string, namespace?: string) => ({
  metadata: { name, namespace },
  status: status ? { conditions: [{ type: 'Ready', status }] } : undefined,
});
const challenge = (state?: string, processing?: boolean) =>
  ({
    metadata: { name: 'web-1-2-3', namespace: 'shop' },
    spec: { dnsName: 'shop.example.com', type: 'HTTP-01' },
    status: state === undefined ? undefined : { state, processing },
  }) as unknown as ChallengeObject;

describe("issuer and challenge metrics under cert-manager's names", () => {
  it.each([
    [issuer('a', 'True'), 'True'],
    [issuer('a', 'False'), 'False'],
    [issuer('a'), 'Unknown'],
    [issuer('a', 'Maybe'), 'Unknown'],
  ])('Ready of %j → %s', (i, want) => expect(readyStatus(i)).toBe(want));

  it.each([
    [challenge(), { status: 'pending', processing: 'false' }],
    [challenge('pending', true), { status: 'pending', processing: 'true' }],
    [challenge('valid', false), { status: 'valid', processing: 'false' }],
    [challenge('errored'), { status: 'errored', processing: 'false' }],
  ])('a Challenge %#: its state and whether it is processed', (c, want) =>
    expect(challengeLabels(c)).toEqual({ name: 'web-1-2-3', namespace: 'shop', domain: 'shop.example.com', type: 'HTTP-01', ...want }),
  );

  it('exposes one series per condition for each issuer, and one per Challenge, from the lists at scrape time', async () => {
    const registry = new Registry();
    let issuers = [issuer('ca', 'True', 'shop')];
    registerIssuerMetrics(
      registry,
      () => issuers,
      () => [issuer('letsencrypt', 'False')],
    );
    registerChallengeMetrics(registry, () => [challenge('pending', true)]);
    const text = await registry.metrics();
    expect(text).toContain('certmanager_issuer_ready_status{name="ca",namespace="shop",condition="True"} 1');
    expect(text).toContain('certmanager_issuer_ready_status{name="ca",namespace="shop",condition="False"} 0');
    expect(text).toContain('certmanager_clusterissuer_ready_status{name="letsencrypt",condition="False"} 1');
    expect(text).toContain(
      'certmanager_certificate_challenge_status{name="web-1-2-3",namespace="shop",domain="shop.example.com",type="HTTP-01",status="pending",processing="true"} 1',
    );
    issuers = [];
    expect(await registry.metrics()).not.toContain('certmanager_issuer_ready_status{');
  });
});
