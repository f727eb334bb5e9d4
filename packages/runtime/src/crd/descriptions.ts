import type { JSONSchemaProps } from './structural-schema.js';

/**
 * The field paths of a CRD's schemas that carry no description: what `kubectl explain` would show
 * as `<no description>`. `metadata` is left out (the API server describes ObjectMeta itself), and so
 * is what the schema keeps unknown (`x-kubernetes-preserve-unknown-fields` without properties).
 * Paths are written as kubectl explain takes them: `spec.acme.solvers.http01`.
 */
export function undescribedFields(crd: { spec: { versions: { name: string; schema?: { openAPIV3Schema?: JSONSchemaProps } }[] } }): string[] {
  const missing: string[] = [];
  const walk = (node: JSONSchemaProps | undefined, path: string) => {
    if (!node) return;
    const properties = node.properties as Record<string, JSONSchemaProps> | undefined;
    for (const [name, child] of Object.entries(properties ?? {})) {
      if (!path && name === 'metadata') continue;
      const p = path ? `${path}.${name}` : name;
      if (typeof child.description !== 'string' || !child.description.trim()) missing.push(p);
      walk(child, p);
    }
    // A list's items and a map's values are explained under the field's own path.
    walk(node.items as JSONSchemaProps | undefined, path);
    if (typeof node.additionalProperties === 'object') walk(node.additionalProperties as JSONSchemaProps, path);
  };
  for (const v of crd.spec.versions) {
    const root = v.schema?.openAPIV3Schema;
    if (root && !root.description) missing.push(`(${v.name})`);
    walk(root, '');
  }
  return missing;
}
