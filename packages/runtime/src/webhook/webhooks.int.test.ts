import { freePort, waitFor } from '@opkit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import {
  ConfigMap,
  CustomResourceDefinition,
  MutatingWebhookConfiguration,
  Namespace,
  Role,
  RoleBinding,
  Secret,
  ValidatingWebhookConfiguration,
} from '../client/kind.js';
import { Transport } from '../client/transport.js';
import type { Manager } from '../manager/manager.js';
import { testManager } from '../testing/harness.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { validatingWebhook } from './admission.js';
import { webhookConfigurations, withConversionClient } from './configuration.js';
import { GizmoV1alpha1, GizmoV1beta1, Gizmos, MODE_ANNOTATION } from '../../examples/webhooks/gizmo.js';
import { keepRequester, recordRequester, Ticket } from '../../examples/webhooks/ticket.js';

describe('webhooks served by the manager, called by a real API server over TLS', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(Namespace, { metadata: { name: 'ops' } });
    await admin.create(Namespace, { metadata: { name: 'apps' } });
  });
  let manager: Manager | undefined;
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });

  const startManager = async (setup: (m: Manager) => void) => {
    const port = await freePort();
    const t = testManager(suite.plane.kubeConfig, {
      webhook: { bindAddress: `127.0.0.1:${port}`, hosts: ['127.0.0.1'], secretNamespace: 'ops', configurationName: 'test-operator' },
    });
    setup(t.manager);
    await t.manager.start();
    manager = t.manager;
    return { port, logs: t.logs };
  };

  it('reads an object stored before v1beta1 existed as v1beta1, and round-trips it through both versions', async () => {
    const { admin } = suite;
    await admin.create(CustomResourceDefinition, GizmoV1alpha1.crd as never);
    await waitFor('v1alpha1 Gizmos to be served', () => admin.list(GizmoV1alpha1.kind).then(() => true));
    await admin.create(GizmoV1alpha1.kind, { metadata: { namespace: 'apps', name: 'old' }, spec: { size: 3 } });

    const { port } = await startManager((m) => m.addConversion(Gizmos));
    // The new CRD, as an upgraded chart would apply it: both versions, v1beta1 stored, and a
    // conversion webhook without a caBundle (the manager injects its CA).
    const current = await admin.get(CustomResourceDefinition, { name: Gizmos.crd.metadata.name });
    const next = withConversionClient(Gizmos.crd, { url: `https://127.0.0.1:${port}` });
    await admin.update(CustomResourceDefinition, { ...current, spec: next.spec } as never);

    const old = await waitFor('the v1alpha1 Gizmo to read back as v1beta1', async () => {
      const o = await admin.get(GizmoV1beta1.kind, { namespace: 'apps', name: 'old' }).catch(() => undefined);
      return o?.spec.replicas === 3 ? o : undefined;
    });
    expect(old).toMatchObject({ apiVersion: 'test.opkit.dev/v1beta1', spec: { replicas: 3, mode: 'fast' } });
    expect(old.metadata.annotations?.[MODE_ANNOTATION]).toBeUndefined();
    const crd = await admin.get(CustomResourceDefinition, { name: Gizmos.crd.metadata.name });
    expect(crd.spec.conversion?.webhook?.clientConfig?.caBundle).toBeTruthy();

    // A v1beta1-only field written through v1beta1 survives a v1alpha1 read and write.
    await admin.patch(GizmoV1beta1.kind, { namespace: 'apps', name: 'old' }, { spec: { mode: 'safe' } });
    const asAlpha = await admin.get(GizmoV1alpha1.kind, { namespace: 'apps', name: 'old' });
    expect(asAlpha.spec).toEqual({ size: 3 });
    expect(asAlpha.metadata.annotations?.[MODE_ANNOTATION]).toBe('safe');
    await admin.update(GizmoV1alpha1.kind, { ...asAlpha, spec: { size: 5 } });
    expect((await admin.get(GizmoV1beta1.kind, { namespace: 'apps', name: 'old' })).spec).toEqual({ replicas: 5, mode: 'safe' });

    // New objects written as v1alpha1 are stored as v1beta1, and read back in both.
    await admin.create(GizmoV1alpha1.kind, { metadata: { namespace: 'apps', name: 'new' }, spec: { size: 1 } });
    expect((await admin.get(GizmoV1beta1.kind, { namespace: 'apps', name: 'new' })).spec).toEqual({ replicas: 1, mode: 'fast' });
    expect((await admin.list(GizmoV1alpha1.kind, { namespace: 'apps' })).items.map((g) => [g.metadata.name, g.spec.size])).toEqual([
      ['new', 1],
      ['old', 5],
    ]);
    expect((await admin.get(CustomResourceDefinition, { name: Gizmos.crd.metadata.name })).status?.storedVersions).toEqual(['v1alpha1', 'v1beta1']);
  });

  it('records who created a Ticket, which no client can forge or change, and fails closed when the webhook is down', async () => {
    const { admin, plane } = suite;
    await admin.create(CustomResourceDefinition, Ticket.crd as never);
    await waitFor('Tickets to be served', () => admin.list(Ticket.kind).then(() => true));
    await admin.create(Role, {
      metadata: { namespace: 'apps', name: 'tickets' },
      rules: [{ apiGroups: ['test.opkit.dev'], resources: ['tickets'], verbs: ['get', 'create', 'update', 'patch'] }],
    });
    await admin.create(RoleBinding, {
      metadata: { namespace: 'apps', name: 'tickets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tickets' },
      subjects: [{ kind: 'Group', name: 'team-a', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const alice = new Client(new Transport((await plane.userCredentials('alice', ['team-a'])).kubeConfig), { fieldManager: 'alice' });

    const { port } = await startManager((m) => m.addWebhook(recordRequester).addWebhook(keepRequester));
    const configs = webhookConfigurations('test-operator', [recordRequester, keepRequester], { url: `https://127.0.0.1:${port}` });
    await admin.create(MutatingWebhookConfiguration, configs.mutating as never);
    await admin.create(ValidatingWebhookConfiguration, configs.validating as never);

    const created = await waitFor('the webhook to record the requester', async () => {
      const name = `t-${Date.now()}`;
      const t = await alice
        .create(Ticket.kind, {
          metadata: { namespace: 'apps', name },
          spec: { title: 'disk full', requester: { username: 'system:admin', groups: ['system:masters'] } },
        })
        .catch(() => undefined);
      return t?.spec.requester?.username === 'alice' ? t : undefined;
    });
    expect(created.spec.requester).toEqual({ username: 'alice', groups: ['team-a', 'system:authenticated'] });
    expect((await admin.get(Ticket.kind, { namespace: 'apps', name: created.metadata.name! })).spec.requester?.username).toBe('alice');

    const forged = alice.patch(Ticket.kind, { namespace: 'apps', name: created.metadata.name! }, { spec: { requester: { username: 'bob' } } });
    await expect(forged).rejects.toThrow(/spec.requester is set by the API server.*cannot change/);
    await alice.patch(Ticket.kind, { namespace: 'apps', name: created.metadata.name! }, { spec: { title: 'disk very full' } });

    // Both configurations carry the runtime's CA; the Secret keeps it and the serving certificate.
    const secret = await admin.get(Secret, { namespace: 'ops', name: 'test-operator-webhook-tls' });
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    const bundle = secret.data!['ca.crt'];
    expect((await admin.get(MutatingWebhookConfiguration, { name: 'test-operator' })).webhooks?.[0]?.clientConfig.caBundle).toBe(bundle);
    expect((await admin.get(ValidatingWebhookConfiguration, { name: 'test-operator' })).webhooks?.[0]?.clientConfig.caBundle).toBe(bundle);

    // failurePolicy Fail: with the operator gone, a Ticket cannot be created without its requester
    // recorded, and the refusal says why.
    await manager!.stop();
    manager = undefined;
    await expect(alice.create(Ticket.kind, { metadata: { namespace: 'apps', name: 'while-down' }, spec: { title: 'x' } })).rejects.toThrow(
      /failed calling webhook "mutate.tickets.test.opkit.dev"/,
    );
    await admin.delete(MutatingWebhookConfiguration, { name: 'test-operator' });
    await admin.delete(ValidatingWebhookConfiguration, { name: 'test-operator' });
  });

  it('is called only for the requests its selectors and match conditions let through: the API server filters', async () => {
    const { admin } = suite;
    await admin.create(Namespace, { metadata: { name: 'guarded', labels: { guard: 'on' } } });
    const seen: string[] = [];
    const hook = validatingWebhook(ConfigMap, {
      name: 'scoped.configmaps.test.opkit.dev',
      operations: ['CREATE'],
      failurePolicy: 'Fail',
      why: 'test',
      namespaceSelector: { matchLabels: { guard: 'on' } },
      objectSelector: { matchExpressions: [{ key: 'exempt', operator: 'DoesNotExist' }] },
      matchConditions: [{ name: 'not-the-admin-bootstrap', expression: "!object.metadata.name.startsWith('boot-')" }],
      validate: (req) => {
        seen.push(req.name ?? '');
        return `no ConfigMap ${req.name} here`;
      },
    });
    const { port } = await startManager((m) => m.addWebhook(hook));
    // Named as the manager's configuration, which it injects its CA into.
    await admin.deleteIfExists(ValidatingWebhookConfiguration, { name: 'test-operator' });
    const { validating } = webhookConfigurations('test-operator', [hook], { url: `https://127.0.0.1:${port}` });
    expect(validating?.webhooks[0]).toMatchObject({ namespaceSelector: hook.scope!.namespaceSelector, matchConditions: hook.scope!.matchConditions });
    await admin.create(ValidatingWebhookConfiguration, validating as never);
    await waitFor('the webhook to refuse in the guarded namespace', async () =>
      admin.create(ConfigMap, { metadata: { namespace: 'guarded', name: `probe-${Date.now()}` } }).then(
        () => false,
        (e: Error) => /no ConfigMap probe-/.test(e.message),
      ),
    );
    const before = seen.length;
    // Each of these is let through by the API server without calling the webhook.
    await admin.create(ConfigMap, { metadata: { namespace: 'apps', name: 'elsewhere' } });
    await admin.create(ConfigMap, { metadata: { namespace: 'guarded', name: 'labelled', labels: { exempt: 'yes' } } });
    await admin.create(ConfigMap, { metadata: { namespace: 'guarded', name: 'boot-1' } });
    expect(seen.length).toBe(before);
    await expect(admin.create(ConfigMap, { metadata: { namespace: 'guarded', name: 'caught' } })).rejects.toThrow(/no ConfigMap caught here/);
    expect(seen.at(-1)).toBe('caught');
    await admin.delete(ValidatingWebhookConfiguration, { name: 'test-operator' });
  });
});
