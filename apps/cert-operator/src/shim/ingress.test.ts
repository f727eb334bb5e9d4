import { describe, expect, it } from 'vitest';
import { planForIngress, type IngressObject } from './ingress.js';
import { specFromAnnotations } from './annotations.js';

const ingress = (annotations: Record<string, string>, tls: { hosts?: string[]; secretName?: string }[], labels?: Record<string, string>): IngressObject =>
  ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', annotations, labels },
    spec: { tls },
  }) as IngressObject;

describe('ingress-shim: what an annotated Ingress asks for', () => {
  it.each([
    ['no trigger annotation: left alone', ingress({}, [{ hosts: ['a.example.com'], secretName: 'a' }]), { skip: true }],
    [
      'issuer and cluster-issuer both: refused',
      ingress({ 'cert-manager.io/issuer': 'x', 'cert-manager.io/cluster-issuer': 'y' }, []),
      { blocked: expect.stringMatching(/both cert-manager.io\/issuer and cert-manager.io\/cluster-issuer/) },
    ],
    ['tls-acme without a default issuer: refused', ingress({ 'kubernetes.io/tls-acme': 'true' }, []), { blocked: expect.stringMatching(/no default issuer/) }],
    [
      'two TLS entries for one Secret: refused',
      ingress({ 'cert-manager.io/issuer': 'ca' }, [
        { hosts: ['a'], secretName: 's' },
        { hosts: ['b'], secretName: 's' },
      ]),
      { blocked: 'spec.tls[0].secretName: "s" must only appear in a single TLS entry but is also used in spec.tls[1].secretName' },
    ],
    [
      'a bad annotation value: refused, not ignored',
      ingress({ 'cert-manager.io/issuer': 'ca', 'cert-manager.io/duration': '90d' }, [{ hosts: ['a'], secretName: 's' }]),
      { blocked: expect.stringMatching(/^cert-manager.io\/duration: /) },
    ],
  ])('%s', (_, ing, want) => {
    expect(planForIngress(ing)).toMatchObject(want);
  });

  it('one Certificate per TLS entry, named after its Secret, owned by the Ingress, hosts split into names and addresses', () => {
    const plan = planForIngress(
      ingress(
        { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
        [
          { hosts: ['shop.example.com', 'www.shop.example.com', '10.0.0.1'], secretName: 'shop-tls' },
          { hosts: ['api.example.com'], secretName: 'api-tls' },
          { secretName: 'no-hosts' },
        ],
        { app: 'shop', 'applyset.kubernetes.io/part-of': 'x' },
      ),
    );
    if (!('certificates' in plan)) throw new Error('no plan');
    expect(plan.skipped).toEqual(['Skipped a TLS block: spec.tls[2].hosts: Required value']);
    expect(plan.certificates.map((c) => [c.metadata.name, c.spec.dnsNames, c.spec.ipAddresses, c.spec.issuerRef])).toEqual([
      ['shop-tls', ['shop.example.com', 'www.shop.example.com'], ['10.0.0.1'], { name: 'letsencrypt', kind: 'ClusterIssuer' }],
      ['api-tls', ['api.example.com'], undefined, { name: 'letsencrypt', kind: 'ClusterIssuer' }],
    ]);
    const c = plan.certificates[0]!;
    expect(c.metadata.labels).toEqual({ app: 'shop' });
    expect(c.metadata.ownerReferences).toEqual([
      { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true },
    ]);
    expect(c.spec.usages).toEqual(['digital signature', 'key encipherment']);
  });

  it("honours cert-manager's Certificate annotations, and edit-in-place and ingress-class for the ACME solver", () => {
    const plan = planForIngress(
      ingress(
        {
          'cert-manager.io/issuer': 'vault',
          'cert-manager.io/issuer-kind': 'VaultIssuer',
          'cert-manager.io/issuer-group': 'example.com',
          'cert-manager.io/common-name': 'shop.example.com',
          'cert-manager.io/duration': '720h',
          'cert-manager.io/renew-before': '240h',
          'cert-manager.io/usages': 'server auth,digital signature',
          'cert-manager.io/private-key-algorithm': 'ECDSA',
          'cert-manager.io/private-key-size': '384',
          'cert-manager.io/private-key-rotation-policy': 'Never',
          'cert-manager.io/revision-history-limit': '3',
          'cert-manager.io/alt-names': 'extra.example.com',
          'cert-manager.io/subject-organizations': 'opkit,shop',
          'cert-manager.io/secret-template': '{"labels":{"team":"shop"}}',
          'acme.cert-manager.io/http01-edit-in-place': 'true',
          'acme.cert-manager.io/http01-ingress-class': 'traefik',
        },
        [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      ),
    );
    if (!('certificates' in plan)) throw new Error('no plan');
    const c = plan.certificates[0]!;
    expect(c.spec).toEqual({
      secretName: 'shop-tls',
      commonName: 'shop.example.com',
      dnsNames: ['shop.example.com', 'extra.example.com'],
      duration: '720h',
      renewBefore: '240h',
      usages: ['server auth', 'digital signature'],
      privateKey: { algorithm: 'ECDSA', size: 384, rotationPolicy: 'Never' },
      revisionHistoryLimit: 3,
      subject: { organizations: ['opkit', 'shop'] },
      secretTemplate: { labels: { team: 'shop' } },
      issuerRef: { name: 'vault', kind: 'VaultIssuer', group: 'example.com' },
    });
    expect(c.metadata.annotations).toEqual({
      'acme.cert.opkit.dev/http01-override-ingress-name': 'web',
      'acme.cert.opkit.dev/http01-override-ingress-class': 'traefik',
    });
  });

  it.each([
    ['cert-manager.io/usages', 'server auth,teleport', /unknown usage "teleport"/],
    ['cert-manager.io/private-key-algorithm', 'DSA', /is not RSA, ECDSA or Ed25519/],
    ['cert-manager.io/renew-before-percentage', '120', /from 1 to 99/],
    ['cert-manager.io/ip-sans', '10.0.0.300', /is not an IP address/],
    ['cert-manager.io/secret-template', '{labels: x}', /not a JSON object/],
  ])('says what is wrong with %s=%s', (annotation, value, want) => {
    expect(specFromAnnotations({ [annotation]: value }).problems.join()).toMatch(want);
  });

  it("reads this operator's annotation names too, which win over cert-manager's", () => {
    expect(specFromAnnotations({ 'cert-manager.io/duration': '720h', 'cert.opkit.dev/duration': '1440h' }).spec.duration).toBe('1440h');
  });
});

describe('--shim-ignore-cert-manager-annotations (cert-manager still runs beside this operator)', () => {
  const both = ingress({ 'cert-manager.io/cluster-issuer': 'letsencrypt', 'acme.cert-manager.io/http01-edit-in-place': 'true' }, [
    { hosts: ['shop.example.com'], secretName: 'shop-tls' },
  ]);

  it('leaves an Ingress annotated only for cert-manager to cert-manager: no Certificate of ours for its Secret', () => {
    expect(planForIngress(both)).toMatchObject({ certificates: [{ metadata: { name: 'shop-tls' } }] });
    expect(planForIngress(both, { ignoreCertManagerAnnotations: true })).toEqual({ skip: true });
  });

  it("acts on this operator's own annotations, and reads none of cert-manager's beside them (not even the solver's)", () => {
    const ours = ingress({ ...both.metadata.annotations, 'cert.opkit.dev/issuer': 'ca', 'cert-manager.io/duration': '720h' }, [
      { hosts: ['shop.example.com'], secretName: 'shop-tls' },
    ]);
    const plan = planForIngress(ours, { ignoreCertManagerAnnotations: true });
    if (!('certificates' in plan)) throw new Error('no plan');
    const c = plan.certificates[0]!;
    expect(c.spec.issuerRef).toEqual({ name: 'ca', kind: 'Issuer' });
    expect(c.spec.duration).toBeUndefined();
    expect(c.metadata.annotations).toBeUndefined();
  });
});
