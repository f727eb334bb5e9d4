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
    limits: Type.Optional(
      Type.Record(Type.String(), Quantity, { description: 'The most of each resource (cpu, memory) a container may use; over the memory limit it is killed.' }),
    ),
    requests: Type.Optional(Type.Record(Type.String(), Quantity, { description: 'The resources (cpu, memory) a container is scheduled with and guaranteed.' })),
  },
  { description: 'CPU and memory requests and limits of the pods.' },
);

/** metav1.Condition list, keyed by type. */
export const Conditions = Type.Array(
  Type.Object({
    type: Type.String({ maxLength: 316, description: 'The aspect of the object this condition is about, in CamelCase (e.g. Ready).' }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')], { description: 'True, False or Unknown.' }),
    reason: Type.String({ maxLength: 1024, description: 'Why the condition last changed, as a CamelCase word programs can match on.' }),
    message: Type.String({ maxLength: 32768, description: 'Why the condition last changed, for humans.' }),
    lastTransitionTime: Type.String({ format: 'date-time', description: 'When the status last changed (not when the condition was last written).' }),
    observedGeneration: Type.Optional(
      Type.Integer({ minimum: 0, description: "The metadata.generation the condition was computed from; older than the object's means it is out of date." }),
    ),
  }),
  { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], description: "The latest observations of the object's state, one per type." },
);
