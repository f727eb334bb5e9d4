import { defineCustomResource } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';

// One TypeBox schema gives the TypeScript types and the CRD (validation, defaults, columns).
export const Greeting = defineCustomResource({
  group: 'example.opkit.dev',
  version: 'v1',
  kind: 'Greeting',
  plural: 'greetings',
  shortNames: ['gr'],
  scope: 'Namespaced',
  spec: Type.Object({
    who: Type.String({ minLength: 1, description: 'Whom to greet.' }),
    style: Type.Union([Type.Literal('plain'), Type.Literal('loud')], { default: 'plain' }),
  }),
  status: Type.Object({
    message: Type.Optional(Type.String()),
    observedGeneration: Type.Optional(Type.Integer()),
    conditions: Type.Optional(
      Type.Array(
        Type.Object({
          type: Type.String(),
          status: Type.String(),
          reason: Type.String(),
          message: Type.String(),
          lastTransitionTime: Type.String({ format: 'date-time' }),
          observedGeneration: Type.Optional(Type.Integer()),
        }),
      ),
    ),
  }),
  printerColumns: [
    { name: 'Who', type: 'string', jsonPath: '.spec.who' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  ],
});
