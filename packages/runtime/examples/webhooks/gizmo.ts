import { defineCustomResource, defineVersionedResource, spoke } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';

// A Gizmo API that evolved: v1alpha1 had `size`; v1beta1 calls it `replicas` and adds `mode`,
// which v1alpha1 cannot hold, so converting down keeps it in an annotation (lossless round trips).
export const MODE_ANNOTATION = 'test.opkit.dev/v1beta1-mode';
const common = { group: 'test.opkit.dev', kind: 'Gizmo', plural: 'gizmos', scope: 'Namespaced' as const };
export const GizmoV1alpha1 = defineCustomResource({
  ...common,
  version: 'v1alpha1',
  spec: Type.Object({ size: Type.Integer({ minimum: 0 }) }),
  status: Type.Object({ ready: Type.Optional(Type.Integer()) }),
});
export const GizmoV1beta1 = defineCustomResource({
  ...common,
  version: 'v1beta1',
  spec: Type.Object({ replicas: Type.Integer({ minimum: 0 }), mode: Type.Union([Type.Literal('fast'), Type.Literal('safe')], { default: 'fast' }) }),
  status: Type.Object({ ready: Type.Optional(Type.Integer()) }),
});
export const Gizmos = defineVersionedResource(GizmoV1beta1, [
  spoke(GizmoV1alpha1, GizmoV1beta1, {
    toHub: ({ spec, metadata, status }) => {
      const { [MODE_ANNOTATION]: mode, ...annotations } = metadata.annotations ?? {};
      return { metadata: { ...metadata, annotations }, spec: { replicas: spec.size, mode: mode === 'safe' ? 'safe' : 'fast' }, status };
    },
    fromHub: ({ spec, metadata, status }) => ({
      metadata: { ...metadata, annotations: { ...metadata.annotations, [MODE_ANNOTATION]: spec.mode } },
      spec: { size: spec.replicas },
      status,
    }),
  }),
]);
