import type { ControlPlane } from '../control-plane/control-plane.js';
import { waitFor } from '../wait.js';

type Schema = { properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean };
type Crd = { spec: { group: string; names: { plural: string }; versions: { name: string; served?: boolean; schema?: { openAPIV3Schema?: Schema } }[] } };

/** Every path `kubectl explain` lists fields under: the root and each object field (lists and maps by their items). */
function objectPaths(node: Schema | undefined, path: string, out: string[]): string[] {
  if (!node) return out;
  if (node.properties && Object.keys(node.properties).length) {
    out.push(path);
    for (const [name, child] of Object.entries(node.properties))
      if (!(path === '' && name === 'metadata')) objectPaths(child, path ? `${path}.${name}` : name, out);
  }
  if (node.items) objectPaths(node.items, path, out);
  if (typeof node.additionalProperties === 'object') objectPaths(node.additionalProperties, path, out);
  return out;
}

/**
 * What `kubectl explain` says of a CRD's fields, asked of the real API server (its published
 * OpenAPI v3): for each level of the schema, the fields it shows as `<no description>`.
 */
export async function explainUndescribed(plane: ControlPlane, crd: Crd): Promise<string[]> {
  // kubectl explain reads dots as field paths: the plural, with --api-version naming the group.
  const resource = crd.spec.names.plural;
  const missing: string[] = [];
  for (const v of crd.spec.versions.filter((x) => x.served !== false)) {
    // The published OpenAPI follows a new CRD a moment later.
    await waitFor(
      `kubectl explain ${resource}`,
      async () => {
        const r = await plane.kubectl(['explain', resource, `--api-version=${crd.spec.group}/${v.name}`], { check: false });
        if (r.code !== 0) throw new Error(r.stderr.trim());
        return true;
      },
      { timeoutMs: 30_000 },
    );
    for (const path of objectPaths(v.schema?.openAPIV3Schema, '', [])) {
      const out = (await plane.kubectl(['explain', path ? `${resource}.${path}` : resource, `--api-version=${crd.spec.group}/${v.name}`])).stdout;
      // The FIELDS section lists each field as "  name\t<type>" followed by its description lines.
      const fields = out.split(/^FIELDS:\s*$/m)[1] ?? '';
      const lines = fields.split('\n');
      lines.forEach((line, i) => {
        const field = /^ {2}(\S+)\t</.exec(line)?.[1];
        if (field && /<no description>/.test(lines[i + 1] ?? '')) missing.push(`${v.name}: ${path ? `${path}.` : ''}${field}`);
      });
      if (!path && /^DESCRIPTION:\s*\n\s*<empty>|<no description>/m.test(out.split(/^FIELDS:/m)[0] ?? '')) missing.push(`${v.name}: (the resource)`);
    }
  }
  return missing;
}
