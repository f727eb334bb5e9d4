import { gatewayApiCrds, helmTemplate, helmTemplateUmbrella, kubectlApply, startControlPlane, verifyOperatorChart, type ControlPlane } from '@opkit/testing';
import { parseAllDocuments } from 'yaml';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../api/index.js';
import { rbacOf } from '../manifests/generate.js';

const repo = join(import.meta.dirname, '../../../..');

describe('charts/cert-operator', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
  });
  afterAll(() => plane?.stop());

  it('lints, renders and is accepted by the API server; RBAC is exactly what the controllers declare', async () => {
    const rendered = await verifyOperatorChart(plane, {
      chartDir: join(repo, 'charts/cert-operator'),
      rules: rbacOf(CERT_APIS.opkit),
      image: 'opkit/cert-operator:0.1.0',
      leaseName: 'cert-operator-leader',
      egressPorts: [443, 80],
      everything: {
        metrics: { prometheusRule: { enabled: true, force: true, labels: { release: 'prometheus' }, expiresWithin: '30d' } },
        certificateOwnerRef: true,
        acme: {
          gatewayAPI: true,
          solver: { image: { digest: `sha256:${'f'.repeat(64)}` } },
          dns01: { recursiveNameservers: ['10.96.0.10:53', '8.8.8.8:53'], recursiveNameserversOnly: true },
        },
        ingressShim: { defaultIssuerName: 'letsencrypt', defaultIssuerKind: 'ClusterIssuer' },
      },
    });
    const [dep] = rendered.defaults.filter((o) => o.kind === 'Deployment') as any[];
    expect(dep.spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining(['--cluster-resource-namespace=opkit-system', '--acme-http01-solver-image=opkit/acme-solver:0.1.0']),
    );
    expect(
      rendered.defaults
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(
      expect.arrayContaining(['certificaterequests.cert.opkit.dev', 'certificates.cert.opkit.dev', 'clusterissuers.cert.opkit.dev', 'issuers.cert.opkit.dev']),
    );
    // The identity webhook: on CREATE of CertificateRequests only, closed when it cannot answer.
    const [mwc] = rendered.defaults.filter((o) => o.kind === 'MutatingWebhookConfiguration') as any[];
    expect(mwc.webhooks.map((w: any) => [w.name, w.failurePolicy, w.rules[0].resources, w.rules[0].operations])).toEqual([
      ['identity.certificaterequests.cert.opkit.dev', 'Fail', ['certificaterequests'], ['CREATE']],
    ]);
    // The CSR check on CREATE, open when it cannot answer (the controller judges the request too);
    // the approval webhook: on UPDATE of their status only, closed when it cannot answer.
    const [vwc] = rendered.defaults.filter((o) => o.kind === 'ValidatingWebhookConfiguration') as any[];
    expect(vwc.webhooks.map((w: any) => [w.name, w.failurePolicy, w.rules[0].resources, w.rules[0].operations])).toEqual([
      ['webhook.cert.opkit.dev', 'Ignore', ['certificaterequests'], ['CREATE']],
      ['approval.certificaterequests.cert.opkit.dev', 'Fail', ['certificaterequests/status'], ['UPDATE']],
    ]);
    // Every toggle on: the solver image pulled by digest from the global registry, and alerts on
    // the certificate metrics (cert-manager's names) that group by the Certificate.
    const [depAll] = rendered.everything.filter((o) => o.kind === 'Deployment') as any[];
    expect(depAll.spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining([
        `--acme-http01-solver-image=registry.example.com/opkit/acme-solver@sha256:${'f'.repeat(64)}`,
        '--dns01-recursive-nameservers=10.96.0.10:53,8.8.8.8:53',
        '--dns01-recursive-nameservers-only',
        '--default-issuer-name=letsencrypt',
        '--default-issuer-kind=ClusterIssuer',
      ]),
    );
    const [rule] = rendered.everything.filter((o) => o.kind === 'PrometheusRule') as any[];
    const alerts = Object.fromEntries(rule.spec.groups[0].rules.map((r: { alert: string }) => [r.alert, r]));
    expect(Object.keys(alerts)).toEqual(['CertificateExpiresSoon', 'CertificateNotReady']);
    expect(alerts.CertificateExpiresSoon.expr).toContain('certmanager_certificate_expiration_timestamp_seconds > 0');
    expect(alerts.CertificateExpiresSoon.expr).toContain(`< ${30 * 86400}`);
    expect(alerts.CertificateNotReady).toMatchObject({
      for: '10m',
      expr: expect.stringContaining('certmanager_certificate_ready_status{condition!="True"} == 1'),
    });
    expect(rule.metadata.labels.release).toBe('prometheus');
    expect(rendered.defaults.filter((o) => o.kind === 'PrometheusRule')).toEqual([]);
    // Watching only team namespaces, the operator still reads ClusterIssuers' Secrets in its own.
    const own = rendered.namespaced.filter((o) => o.kind === 'Role' && o.metadata.name.endsWith('-cluster-resources')) as any[];
    expect(own.map((r) => [r.metadata.namespace, r.rules])).toEqual([
      ['opkit-system', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }]],
    ]);
  });

  it("apiMode cert-manager: cert-manager's CRDs, RBAC and webhooks, the flag, and a read of cert-manager's Lease", async () => {
    const api = CERT_APIS['cert-manager'];
    // Every invariant of an operator chart holds in this mode too, RBAC exactly this mode's rules.
    const rendered = await verifyOperatorChart(plane, {
      chartDir: join(repo, 'charts/cert-operator'),
      values: { apiMode: 'cert-manager' },
      rules: rbacOf(api),
      image: 'opkit/cert-operator:0.1.0',
      leaseName: 'cert-operator-leader',
      egressPorts: [443, 80],
    });
    const crds = rendered.defaults.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name);
    expect(crds.sort()).toEqual(api.resources.map((r) => r.crd.metadata.name).sort());
    expect(crds.every((n) => n.endsWith('cert-manager.io'))).toBe(true);
    const [dep] = rendered.defaults.filter((o) => o.kind === 'Deployment') as any[];
    expect(dep.spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining(['--api-mode=cert-manager', '--cert-manager-lease-namespace=kube-system']),
    );
    const hooks = rendered.defaults
      .filter((o) => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration')
      .flatMap((o: any) => o.webhooks.map((w: any) => [w.name, w.rules[0].apiGroups, w.rules[0].resources]));
    expect(hooks).toEqual([
      ['identity.certificaterequests.cert-manager.io', ['cert-manager.io'], ['certificaterequests']],
      // cert-manager's own webhook's name, which cmctl check api looks for in a denial.
      ['webhook.cert-manager.io', ['cert-manager.io'], ['certificaterequests']],
      ['approval.certificaterequests.cert-manager.io', ['cert-manager.io'], ['certificaterequests/status']],
    ]);
    const lease = rendered.defaults.filter((o) => o.kind === 'Role' && o.metadata.name.endsWith('-cert-manager-lease')) as any[];
    expect(lease.map((r) => [r.metadata.namespace, r.rules])).toEqual([
      ['kube-system', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['cert-manager-controller'], verbs: ['get'] }]],
    ]);
    // Where cert-manager elects elsewhere, the flag and the grant follow.
    const moved = parseAllDocuments(
      await helmTemplate(join(repo, 'charts/cert-operator'), { values: { apiMode: 'cert-manager', certManagerLease: { namespace: 'cert-manager' } } }),
    )
      .map((d) => d.toJSON() as any)
      .filter(Boolean);
    expect(moved.find((o) => o.kind === 'Deployment').spec.template.spec.containers[0].args).toContain('--cert-manager-lease-namespace=cert-manager');
    expect(moved.find((o) => o.kind === 'Role' && o.metadata.name.endsWith('-cert-manager-lease')).metadata.namespace).toBe('cert-manager');
    // And opkit mode installs none of it.
    const opkit = parseAllDocuments(await helmTemplate(join(repo, 'charts/cert-operator'), {}))
      .map((d) => d.toJSON() as any)
      .filter(Boolean);
    expect(opkit.filter((o) => o.metadata?.name?.endsWith('cert-manager.io') || o.metadata?.name?.endsWith('-cert-manager-lease'))).toEqual([]);
  });

  // The webhooks on 9443 with Fail blocked every request on clusters whose API server reaches pods
  // on a few ports only (GKE private: 443 and 10250) or not at all (EKS with a custom CNI).
  it('takes the webhook port, hostNetwork and failure policy from values, and refuses the kubelet port on the host', async () => {
    const render = async (webhook: object) =>
      parseAllDocuments(await helmTemplate(join(repo, 'charts/cert-operator'), { values: { webhook } }))
        .map((d) => d.toJSON() as any)
        .filter(Boolean);
    const gke = await render({ port: 10250, failurePolicy: 'Ignore' });
    const dep = gke.find((o) => o.kind === 'Deployment');
    const manager = dep.spec.template.spec.containers[0];
    expect(manager.args).toContain('--webhook-bind-address=:10250');
    expect(manager.ports).toContainEqual({ name: 'webhook', containerPort: 10250, protocol: 'TCP' });
    expect(dep.spec.template.spec.hostNetwork).toBeUndefined();
    const svc = gke.find((o) => o.kind === 'Service' && o.spec.ports.some((p: any) => p.targetPort === 'webhook'));
    expect(svc.spec.ports).toEqual([expect.objectContaining({ port: 443, targetPort: 'webhook' })]);
    expect(gke.find((o) => o.kind === 'MutatingWebhookConfiguration').webhooks.map((w: any) => w.failurePolicy)).toEqual(['Ignore']);
    expect(gke.find((o) => o.kind === 'ValidatingWebhookConfiguration').webhooks.map((w: any) => w.failurePolicy)).toEqual(['Ignore', 'Ignore']);
    const eks = (await render({ port: 10260, hostNetwork: true })).find((o) => o.kind === 'Deployment');
    expect(eks.spec.template.spec).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    await expect(render({ port: 10250, hostNetwork: true })).rejects.toThrow(/that is the kubelet's port on every node/);
    await expect(render({ failurePolicy: 'Sometimes' })).rejects.toThrow(/failurePolicy/);
  });

  it('renders with the memcached chart in one parent chart, with cert-manager-style global values, each chart keeping its own names and labels', async () => {
    const objects = await helmTemplateUmbrella([join(repo, 'charts/memcached-operator'), join(repo, 'charts/cert-operator')], {
      // What a parent that also carries cert-manager passes down: its global keys are accepted and left alone.
      global: {
        imagePullSecrets: [{ name: 'regcred' }],
        commonLabels: { 'example.com/team': 'platform' },
        priorityClassName: 'system-cluster-critical',
        rbac: { create: true, aggregateClusterRoles: true },
        podSecurityPolicy: { enabled: false },
        logLevel: 2,
        leaderElection: { namespace: 'kube-system' },
        revisionHistoryLimit: 2,
      },
      'memcached-operator': { replicaCount: 2 },
      'cert-operator': { logLevel: 'debug' },
    });
    const byChart = (name: string) => objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/name'] === name);
    const memcached = byChart('memcached-operator');
    const cert = byChart('cert-operator');
    expect(memcached.length + cert.length).toBe(objects.length);
    // The cert chart's helpers never rename or relabel the memcached chart's objects.
    for (const [chart, objs] of [
      ['memcached-operator', memcached],
      ['cert-operator', cert],
    ] as const) {
      expect(objs.length).toBeGreaterThan(5);
      for (const o of objs) {
        expect(o.metadata.labels?.['helm.sh/chart'], `${o.kind} ${o.metadata.name}`).toBe(`${chart}-0.1.0`);
        expect(o.metadata.labels?.['example.com/team'], `${o.kind} ${o.metadata.name}`).toBe('platform');
      }
      const [dep] = objs.filter((o) => o.kind === 'Deployment') as any[];
      expect(dep.metadata.name).toBe(`platform-${chart}`);
      expect(dep.spec.template.spec.containers[0].image).toBe(`opkit/${chart}:0.1.0`);
      expect(dep.spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    }
    expect((memcached.find((o) => o.kind === 'Deployment') as any).spec.replicas).toBe(2);
    expect(memcached.filter((o) => o.kind === 'PodDisruptionBudget')).toHaveLength(1);
    expect((cert.find((o) => o.kind === 'Deployment') as any).spec.template.spec.containers[0].args).toContain('--log-level=debug');
    // The API server takes it all (CRDs applied, the rest dry-run).
    await plane.kubectl(['create', 'namespace', 'platform']);
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
    await kubectlApply(plane.kubeconfigPath, crds.map((o) => JSON.stringify(o)).join('\n---\n'));
    await kubectlApply(
      plane.kubeconfigPath,
      objects
        .filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Pod')
        .map((o) => JSON.stringify(o))
        .join('\n---\n'),
      { dryRun: 'server' },
    );
  });

  it("accepts every example in apps/cert-operator/examples (server-side dry run against the chart's CRDs)", async () => {
    const dir = join(repo, 'apps/cert-operator/examples');
    await plane.kubectl(['create', 'namespace', 'examples']).catch(() => undefined);
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(files.sort()).toEqual([
      'acme-issuer.yaml',
      'ca-issuer.yaml',
      'constrained-ca.yaml',
      'dns01-rfc2136.yaml',
      'gateway-shim.yaml',
      'ingress-shim.yaml',
      'keystores.yaml',
    ]);
    // The gateway-shim example is a Gateway: the Gateway API's published CRDs, as its users have.
    await kubectlApply(plane.kubeconfigPath, (await gatewayApiCrds()).join('\n---\n'));
    await plane.kubectl(['wait', '--for=condition=Established', 'crd/gateways.gateway.networking.k8s.io']);
    for (const f of files) {
      const r = await plane.kubectl(['apply', '--dry-run=server', '-n', 'examples', '-f', join(dir, f)], { check: false });
      expect(r.stderr, f).toBe('');
      expect(r.code, f).toBe(0);
    }
  });
});
