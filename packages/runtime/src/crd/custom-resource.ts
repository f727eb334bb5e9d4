import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { defineKind, type Kind } from '../client/kind.js';
import type { KubeObject, ObjectMeta } from '../client/types.js';
import { toStructural, type JSONSchemaProps } from './structural-schema.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface CustomResourceDefinitionSpec<Spec extends TSchema, Status extends TSchema> {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope: 'Namespaced' | 'Cluster';
  spec: Spec;
  status?: Status;
  /** Is `spec` required on create (default true). */
  specRequired?: boolean;
  printerColumns?: PrinterColumn[];
  /** The scale subresource, so `kubectl scale` and HPAs work. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /**
   * Fields a list or watch can select on (`fieldSelector=spec.color=blue`, `kubectl get
   * --field-selector`), as JSON paths: `['.spec.color']`. The API server then filters, so an
   * informer or a list of one kind of object need not fetch them all. Strings, integers and booleans
   * only; at most 8 (Kubernetes' limits).
   */
  selectableFields?: string[];
  /** CEL rules on the whole object (x-kubernetes-validations). */
  validations?: { rule: string; message?: string; messageExpression?: string; reason?: string; fieldPath?: string }[];
  description?: string;
}

export type CustomObject<Spec extends TSchema, Status extends TSchema> = KubeObject & {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: Static<Spec>;
  status?: Static<Status>;
};

export interface CustomResource<Spec extends TSchema, Status extends TSchema> {
  kind: Kind<CustomObject<Spec, Status>>;
  /** The CustomResourceDefinition object, ready to apply or render. */
  crd: Record<string, unknown> & { metadata: { name: string } };
  definition: CustomResourceDefinitionSpec<Spec, Status>;
}

/**
 * One source of truth for a custom resource, as kubebuilder markers are in Go: the TypeBox schemas
 * give both the TypeScript types and the CRD (structural schema, defaults, enums, CEL rules,
 * printer columns, short names, status and scale subresources).
 */
export function defineCustomResource<Spec extends TObject, Status extends TObject>(
  def: CustomResourceDefinitionSpec<Spec, Status>,
): CustomResource<Spec, Status> {
  const kind = defineKind<CustomObject<Spec, Status>>({
    group: def.group,
    version: def.version,
    kind: def.kind,
    plural: def.plural,
    namespaced: def.scope === 'Namespaced',
  });
  const root: JSONSchemaProps = {
    type: 'object',
    ...(def.description ? { description: def.description } : {}),
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: { type: 'object' },
      // kubectl explain shows these; a schema that says nothing gets the conventional sentence.
      spec: { description: `The desired state of the ${def.kind}.`, ...toStructural(def.spec) },
      ...(def.status ? { status: { description: `The observed state of the ${def.kind}, written by its controller.`, ...toStructural(def.status) } } : {}),
    },
    ...(def.specRequired === false ? {} : { required: ['spec'] }),
    ...(def.validations?.length ? { 'x-kubernetes-validations': def.validations } : {}),
  };
  const subresources: Record<string, unknown> = {};
  if (def.status) subresources.status = {};
  if (def.scale) subresources.scale = def.scale;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${def.group}` },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular ?? def.kind.toLowerCase(),
        ...(def.shortNames?.length ? { shortNames: def.shortNames } : {}),
        ...(def.categories?.length ? { categories: def.categories } : {}),
      },
      scope: def.scope,
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: root },
          ...(Object.keys(subresources).length ? { subresources } : {}),
          ...(def.printerColumns?.length ? { additionalPrinterColumns: def.printerColumns } : {}),
          ...(def.selectableFields?.length ? { selectableFields: def.selectableFields.map((jsonPath) => ({ jsonPath })) } : {}),
        },
      ],
    },
  };
  return { kind, crd, definition: def };
}
