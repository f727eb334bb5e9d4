import type { TSchema } from '@sinclair/typebox';

/** A JSONSchemaProps node as apiextensions.k8s.io/v1 accepts it. */
export type JSONSchemaProps = Record<string, unknown>;

const PASS_THROUGH = [
  'description',
  'type',
  'format',
  'default',
  'enum',
  'nullable',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'example',
];

/**
 * Turns a TypeBox schema into a structural schema, the form CRDs require:
 * - unions of literals become `enum`s; a literal becomes a one-value enum;
 * - `Type.Record(String, X)` becomes `additionalProperties: X` (a map);
 * - `Type.Unknown()` / `Type.Any()` keep unknown fields (`x-kubernetes-preserve-unknown-fields`);
 * - `additionalProperties: false` is dropped: the API server prunes unknown fields, and rejects
 *   them outright when the client asks for strict field validation (kubectl does by default);
 * - `x-kubernetes-*` extensions (CEL validations, list types, int-or-string) pass through;
 * - a property with a `default` is not `required`: the API server defaults before it validates, so
 *   it is never missing there, while client-side validators (kubectl checking the items of a
 *   `kind: List`, editors) would reject manifests that rightly leave it out. The TypeScript type
 *   keeps it required: every stored object has it.
 */
export function toStructural(schema: TSchema | JSONSchemaProps): JSONSchemaProps {
  const s = schema as Record<string, unknown>;
  const out: JSONSchemaProps = {};

  const anyOf = s.anyOf as Record<string, unknown>[] | undefined;
  if (anyOf) {
    const first = anyOf[0]?.const;
    if (anyOf.every((b) => 'const' in b)) {
      out.type = typeof first === 'number' ? (Number.isInteger(first) ? 'integer' : 'number') : 'string';
      out.enum = anyOf.map((b) => b.const);
    } else if (s['x-kubernetes-int-or-string']) {
      // handled below
    } else {
      throw new Error(`unions other than literal enums are not structural: ${JSON.stringify(s).slice(0, 200)}`);
    }
  }
  if ('const' in s) {
    out.type = typeof s.const === 'number' ? 'integer' : typeof s.const === 'boolean' ? 'boolean' : 'string';
    out.enum = [s.const];
  }
  for (const k of PASS_THROUGH) if (k in s && !(k in out)) out[k] = s[k];
  for (const [k, v] of Object.entries(s)) if (k.startsWith('x-kubernetes-')) out[k] = v;

  if (out['x-kubernetes-int-or-string']) {
    delete out.type;
    return out;
  }
  if (s.type === 'object' || s.properties || s.patternProperties) {
    out.type = 'object';
    const props = s.properties as Record<string, TSchema> | undefined;
    if (props && Object.keys(props).length) {
      out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toStructural(v)]));
      const required = (s.required as string[] | undefined)?.filter((r) => r in props && !('default' in (props[r] as object)));
      if (required?.length) out.required = required;
    }
    const pattern = s.patternProperties as Record<string, TSchema> | undefined;
    const [patterned] = Object.values(pattern ?? {});
    if (patterned) out.additionalProperties = toStructural(patterned);
    else if (s.additionalProperties && typeof s.additionalProperties === 'object') out.additionalProperties = toStructural(s.additionalProperties as TSchema);
    if (!props && !pattern && !out.additionalProperties && !out['x-kubernetes-preserve-unknown-fields']) out['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (s.type === 'array') {
    out.items = toStructural((s.items as TSchema | undefined) ?? {});
  } else if (!s.type && !anyOf && !('const' in s)) {
    // Type.Unknown()/Any(): any JSON value, kept as sent.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return out;
}
