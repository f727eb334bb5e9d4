import { waitFor } from '@opkit/testing';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { defineCustomResource } from '../crd/custom-resource.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { Client } from './client.js';
import { KindNotServedError, RESTMapper } from './discovery.js';
import { ConfigMap, CustomResourceDefinition, Namespace } from './kind.js';
import { Transport } from './transport.js';

const Lamp = defineCustomResource({
  group: 'test.opkit.dev',
  version: 'v1',
  kind: 'Lamp',
  plural: 'lamps',
  scope: 'Cluster',
  spec: Type.Object({ on: Type.Boolean() }),
});

describe('discovery and the REST mapper, against a real API server', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(Namespace, { metadata: { name: 'disc' } });
  });

  it('maps kinds to where they live, asks again for one just installed, and says which is not served', async () => {
    const transport = new Transport(suite.plane.kubeConfig);
    const mapper = new RESTMapper(transport);
    expect(await mapper.kindFor('v1', 'ConfigMap')).toEqual({ ...ConfigMap });
    expect(await mapper.kindFor('apps/v1', 'Deployment')).toMatchObject({ group: 'apps', version: 'v1', plural: 'deployments', namespaced: true });
    expect(await mapper.kindFor('v1', 'Node')).toMatchObject({ plural: 'nodes', namespaced: false });

    // Not served yet: the group-version is unknown.
    await expect(mapper.kindFor('test.opkit.dev/v1', 'Lamp')).rejects.toThrow(KindNotServedError);
    await suite.admin.create(CustomResourceDefinition, Lamp.crd as never);
    // Installed now: a miss in what was known asks the API server again.
    const lamp = await waitFor('the Lamp kind to be discovered', () => mapper.kindFor('test.opkit.dev/v1', 'Lamp').catch(() => undefined));
    expect(lamp).toEqual({ group: 'test.opkit.dev', version: 'v1', kind: 'Lamp', plural: 'lamps', namespaced: false });
    // A kind from discovery addresses the API like one defined by hand.
    const client = new Client(transport, { fieldManager: 'disc' });
    await client.create(lamp, { metadata: { name: 'desk' }, spec: { on: true } } as never);
    expect((await client.list(lamp)).items.map((l) => l.metadata.name)).toEqual(['desk']);
    await expect(mapper.kindFor('apps/v1', 'Gizmo')).rejects.toThrow(/does not serve Gizmo in apps\/v1/);
  });
});
