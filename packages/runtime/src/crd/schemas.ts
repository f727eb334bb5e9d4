import { Type } from '@sinclair/typebox';

// Schemas custom resources share with Kubernetes' own types, for use in defineCustomResource specs.

/** A Kubernetes resource quantity: `100m`, `64Mi`, or a plain number. */
export const Quantity = Type.Unsafe<string | number>({
  'x-kubernetes-int-or-string': true,
  pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
});

/** corev1.ResourceRequirements (limits and requests). */
export const ResourceRequirements = Type.Object(
  {
    limits: Type.Optional(Type.Record(Type.String(), Quantity)),
    requests: Type.Optional(Type.Record(Type.String(), Quantity)),
  },
  { description: 'CPU and memory requests and limits of the pods.' },
);

/** metav1.Condition list, keyed by type. */
export const Conditions = Type.Array(
  Type.Object({
    type: Type.String({ maxLength: 316 }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
    reason: Type.String({ maxLength: 1024 }),
    message: Type.String({ maxLength: 32768 }),
    lastTransitionTime: Type.String({ format: 'date-time' }),
    observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
);
