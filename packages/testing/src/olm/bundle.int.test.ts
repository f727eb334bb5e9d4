import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { workspaceRoot } from '../e2e/workspace.js';
import { staleBundleFiles } from './files.js';
import { validateBundle } from './validator.js';

const root = workspaceRoot();
const APPS = ['memcached-operator', 'cdn-operator', 'cert-operator'];
const csvOf = (app: string) => parse(readFileSync(join(root, 'apps', app, 'bundle/manifests', `${app}.clusterserviceversion.yaml`), 'utf8'));

describe('OLM bundles (nx run @opkit/<app>:bundle)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'opkit-bundle-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.each(APPS)('%s: the committed bundle is what the chart and olm.yaml give now', async (app) => {
    const stale = (await staleBundleFiles(app, root)).map(([p]) => p);
    expect(stale, `run nx run @opkit/${app}:bundle`).toEqual([]);
  });

  it.each(APPS)(
    "%s: operator-framework's validators accept the bundle",
    async (app) => {
      const findings = await validateBundle(join(root, 'apps', app, 'bundle'));
      expect(findings.filter((f) => f.level === 'error')).toEqual([]);
    },
    600_000,
  );

  it("states each operator's capability level, with why", () => {
    expect(Object.fromEntries(APPS.map((a) => [a, csvOf(a).metadata.annotations.capabilities]))).toEqual({
      'memcached-operator': 'Seamless Upgrades',
      'cdn-operator': 'Seamless Upgrades',
      'cert-operator': 'Deep Insights',
    });
    for (const a of APPS) expect(csvOf(a).spec.description).toMatch(new RegExp(`Capability level: ${csvOf(a).metadata.annotations.capabilities}\\.\\*\\* \\S`));
  });

  it('leaves webhook certificates and namespaces to OLM: webhooks declared in the CSV, served from the directory OLM mounts', () => {
    const mc = csvOf('memcached-operator');
    expect(mc.spec.webhookdefinitions).toEqual([
      expect.objectContaining({ type: 'ConversionWebhook', conversionCRDs: ['memcacheds.cache.opkit.dev'], targetPort: 'webhook', webhookPath: '/convert' }),
    ]);
    const container = mc.spec.install.spec.deployments[0].spec.template.spec.containers[0];
    expect(container.args).toContain('--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs');
    expect(container.args.filter((a: string) => /--(leader-election-namespace|webhook-host|webhook-secret-name)=/.test(a))).toEqual([]);
    expect(container.env.find((e: { name: string }) => e.name === 'WATCH_NAMESPACE').valueFrom.fieldRef.fieldPath).toBe(
      "metadata.annotations['olm.targetNamespaces']",
    );
    // The cert operator's three: the requester's identity, the request's CSR at creation, and who may
    // approve (on the status subresource).
    expect(csvOf('cert-operator').spec.webhookdefinitions).toEqual([
      expect.objectContaining({ type: 'MutatingAdmissionWebhook', failurePolicy: 'Fail', webhookPath: '/mutate-cert-opkit-dev-v1-certificaterequest' }),
      expect.objectContaining({
        type: 'ValidatingAdmissionWebhook',
        failurePolicy: 'Ignore',
        webhookPath: '/validate-cert-opkit-dev-v1-certificaterequest-create',
        rules: [expect.objectContaining({ resources: ['certificaterequests'], operations: ['CREATE'] })],
      }),
      expect.objectContaining({
        type: 'ValidatingAdmissionWebhook',
        failurePolicy: 'Fail',
        webhookPath: '/validate-cert-opkit-dev-v1-certificaterequest',
        rules: [expect.objectContaining({ resources: ['certificaterequests/status'], operations: ['UPDATE'] })],
      }),
    ]);
    // Keeping a certificate of its own is not the operator's job under OLM: no rights for it.
    const rules = JSON.stringify(csvOf('cert-operator').spec.install.spec);
    expect(rules).not.toContain('mutatingwebhookconfigurations');
  });

  it('the validator is not a rubber stamp: a bundle missing the CRD its CSV owns is refused', async () => {
    const dir = join(scratch, 'broken');
    cpSync(join(root, 'apps/memcached-operator/bundle'), dir, { recursive: true });
    rmSync(join(dir, 'manifests/cache.opkit.dev_memcacheds.yaml'));
    const errors = (await validateBundle(dir)).filter((f) => f.level === 'error');
    expect(errors.map((e) => e.message).join('\n')).toMatch(/owned CRD "cache.opkit.dev\/v1beta1, Kind=Memcached" not found in bundle/);
  }, 600_000);
});
