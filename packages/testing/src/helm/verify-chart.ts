import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { helmLint, helmTemplate, kubectlApply } from './chart.js';

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/**
 * What every chart must pass, for each set of values: `helm lint --strict`, `helm template`, and a
 * server-side dry-run apply of the result against a real API server (CRDs first, since the rest may
 * depend on them). Returns the rendered objects per variant for the chart's own assertions.
 */
export async function verifyChart<V extends string>(
  plane: ControlPlane,
  chartDir: string,
  variants: Record<V, Record<string, unknown>>,
  namespace = 'opkit-system',
): Promise<Record<V, RenderedObject[]>> {
  await plane.kubectl(['create', 'namespace', namespace]).catch(() => undefined);
  const out = {} as Record<V, RenderedObject[]>;
  for (const [name, values] of Object.entries(variants) as [V, Record<string, unknown>][]) {
    await helmLint(chartDir, { values, namespace });
    const yaml = await helmTemplate(chartDir, { release: 'opkit', namespace, values });
    const objects = parseAllDocuments(yaml)
      .map((d) => d.toJSON() as RenderedObject | null)
      .filter((o): o is RenderedObject => !!o && !!o.kind);
    for (const ns of new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => !!n))) {
      await plane.kubectl(['create', 'namespace', ns]).catch(() => undefined);
    }
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
    const rest = objects.filter((o) => o.kind !== 'CustomResourceDefinition');
    const toYaml = (objs: RenderedObject[]) => objs.map((o) => JSON.stringify(o)).join('\n---\n');
    // CRDs are really applied (dry-run objects of a kind the server does not know yet would fail).
    if (crds.length) await kubectlApply(plane.kubeconfigPath, toYaml(crds));
    if (rest.length) {
      await kubectlApply(plane.kubeconfigPath, toYaml(rest), { dryRun: 'server' }).catch((err: Error) => {
        throw new Error(`variant "${name}": the API server refused the rendered chart: ${err.message}`);
      });
    }
    out[name] = objects;
  }
  return out;
}
