import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { defineCustomResource } from './custom-resource.js';
import { toStructural } from './structural-schema.js';

describe('toStructural', () => {
  it('turns literal unions into enums, records into maps, unknown into preserved fields', () => {
    const s = toStructural(
      Type.Object(
        {
          role: Type.Union([Type.Literal('balancer'), Type.Literal('cache')]),
          labels: Type.Optional(Type.Record(Type.String(), Type.String())),
          raw: Type.Optional(Type.Unknown()),
          size: Type.Integer({ minimum: 0, default: 1 }),
          port: Type.Unsafe<number | string>({ 'x-kubernetes-int-or-string': true }),
        },
        { additionalProperties: false, 'x-kubernetes-validations': [{ rule: 'self.size < 10', message: 'too big' }] },
      ),
    );
    expect(s).toEqual({
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.size < 10', message: 'too big' }],
      properties: {
        role: { type: 'string', enum: ['balancer', 'cache'] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        raw: { 'x-kubernetes-preserve-unknown-fields': true },
        size: { type: 'integer', minimum: 0, default: 1 },
        port: { 'x-kubernetes-int-or-string': true },
      },
      required: ['role', 'port'],
    });
  });

  // Found applying a sample Memcached inside a `kind: List`: kubectl validates List items on the
  // client, against the published schema, and refused the sample for leaving out defaulted fields
  // the API server would have filled (`missing required field "port"`).
  it('leaves fields with a default out of `required`: the API server fills them before it validates', () => {
    const s = toStructural(Type.Object({ size: Type.Integer({ default: 1 }), image: Type.String({ default: 'x:1' }), name: Type.String() }));
    expect(s.required).toEqual(['name']);
    expect(toStructural(Type.Object({ size: Type.Integer({ default: 1 }) })).required).toBeUndefined();
  });

  it('refuses unions a structural schema cannot express', () => {
    expect(() => toStructural(Type.Union([Type.String(), Type.Integer()]))).toThrow(/not structural/);
  });
});

describe('defineCustomResource', () => {
  it('builds a CRD with status and scale subresources, printer columns and short names', () => {
    const { crd, kind } = defineCustomResource({
      group: 'test.opkit.dev',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      shortNames: ['wd'],
      scope: 'Namespaced',
      spec: Type.Object({ size: Type.Integer() }),
      status: Type.Object({ replicas: Type.Optional(Type.Integer()) }),
      scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas' },
      printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
    });
    expect(kind).toMatchObject({ group: 'test.opkit.dev', plural: 'widgets', namespaced: true });
    const v = (crd.spec as any).versions[0];
    expect(crd.metadata.name).toBe('widgets.test.opkit.dev');
    expect((crd.spec as any).names).toEqual({ kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget', shortNames: ['wd'] });
    expect(v.subresources).toEqual({ status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas' } });
    expect(v.additionalPrinterColumns).toHaveLength(1);
    expect(v.schema.openAPIV3Schema.required).toEqual(['spec']);
  });
});
