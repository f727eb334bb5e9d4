import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/types.js';
import { defineCustomResource } from '../crd/custom-resource.js';
import { defineVersionedResource, spoke } from '../crd/versioned-resource.js';
import { conversionRoundTrips } from './conversion.js';
import { Converter } from './conversion.js';
import { Gizmos, MODE_ANNOTATION } from '../../examples/webhooks/gizmo.js';

const common = { group: 'test.opkit.dev', kind: 'Widget', plural: 'widgets', scope: 'Namespaced' as const };
const V1 = defineCustomResource({ ...common, version: 'v1', spec: Type.Object({ size: Type.Integer() }) });
const V2 = defineCustomResource({ ...common, version: 'v2', spec: Type.Object({ replicas: Type.Integer() }) });
/** Spoke functions that build new metadata, as a hurried author writes them: no labels, no annotations. */
const Widgets = defineVersionedResource(V2, [
  spoke(V1, V2, {
    toHub: (o) => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace }, spec: { replicas: o.spec.size } }) as never,
    fromHub: (o) => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace }, spec: { size: o.spec.replicas } }) as never,
  }),
]);

const stored: KubeObject = {
  apiVersion: 'test.opkit.dev/v2',
  kind: 'Widget',
  metadata: {
    name: 'w',
    namespace: 'shop',
    uid: 'u-1',
    resourceVersion: '7',
    labels: { team: 'payments' },
    annotations: { 'owner.example.com/pager': 'alice' },
  },
  spec: { replicas: 3 },
} as KubeObject;

describe('conversion keeps what the version does not change', () => {
  it('keeps labels and annotations a spoke function did not carry, in both directions', () => {
    const c = new Converter();
    c.add(Widgets);
    const down = c.convert(stored, 'test.opkit.dev/v1');
    expect(down.metadata).toMatchObject({ labels: { team: 'payments' }, annotations: { 'owner.example.com/pager': 'alice' } });
    // An old client's read-modify-write sends back what it read: the labels survive the trip up.
    const up = c.convert({ ...down, spec: { size: 4 } } as KubeObject, 'test.opkit.dev/v2');
    expect(up.metadata).toMatchObject({ labels: { team: 'payments' }, annotations: { 'owner.example.com/pager': 'alice' } });
    expect(conversionRoundTrips(Widgets, [stored])).toEqual([]);
  });

  it('leaves metadata a spoke function returns as it returned it (an annotation taken out stays out)', () => {
    const c = new Converter();
    c.add(Gizmos);
    const gizmo = {
      apiVersion: 'test.opkit.dev/v1alpha1',
      kind: 'Gizmo',
      metadata: { name: 'g', namespace: 'shop', annotations: { [MODE_ANNOTATION]: 'safe', keep: 'me' } },
      spec: { size: 2 },
    } as KubeObject;
    const hub = c.convert(gizmo, 'test.opkit.dev/v1beta1') as KubeObject & { spec: { mode: string } };
    expect(hub.spec.mode).toBe('safe');
    expect(hub.metadata.annotations).toEqual({ keep: 'me' });
  });

  it('finds a lossy conversion and says what it loses', () => {
    const Lossy = defineVersionedResource(V2, [
      spoke(V1, V2, {
        toHub: (o) => ({ ...o, spec: { replicas: o.spec.size } }) as never,
        fromHub: (o) => ({ ...o, spec: { size: Math.min(o.spec.replicas, 2) } }) as never,
      }),
    ]);
    expect(conversionRoundTrips(Lossy, [stored])).toEqual([{ name: 'shop/w', from: 'v2', via: 'v1', differences: ['spec.replicas: 3 → 2'] }]);
    expect(
      conversionRoundTrips(Gizmos, [
        { apiVersion: 'test.opkit.dev/v1beta1', kind: 'Gizmo', metadata: { name: 'g', namespace: 'shop' }, spec: { replicas: 1, mode: 'safe' } } as KubeObject,
      ]),
    ).toEqual([]);
  });
});
