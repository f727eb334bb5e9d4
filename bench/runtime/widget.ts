// The custom resource the runtime benches reconcile: small, with a status to write.
import { defineCustomResource } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';

export const Widget = defineCustomResource({
  group: 'bench.opkit.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  scope: 'Namespaced',
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ observedGeneration: Type.Optional(Type.Integer()), run: Type.Optional(Type.Integer()) }),
});
