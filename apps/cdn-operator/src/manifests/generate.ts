// The chart files derived from code: the CRD (from the TypeBox schema) and the RBAC rules (from the
// rules declared next to the controller).
import { renderCrdTemplate, renderRulesTemplate, renderValuesSchema, renderValuesYaml } from '@opkit/runtime';
import { join } from 'node:path';
import { CdnCluster } from '../api/v1/cdncluster.js';
import { CDN_RULES } from '../controllers/cdncluster/controller.js';

export const CHART = 'cdn-operator';
export const GENERATOR = 'nx run @opkit/cdn-operator:generate';

export function generatedFiles(repoRoot: string): Record<string, string> {
  const chart = join(repoRoot, 'charts', CHART);
  return {
    [join(chart, 'values.schema.json')]: renderValuesSchema(chart, join(repoRoot, 'charts/opkit-lib')),
    [join(chart, 'values.yaml')]: renderValuesYaml(chart, join(repoRoot, 'charts/opkit-lib'), GENERATOR),
    [join(chart, 'templates/crds/cdn.opkit.dev_cdnclusters.yaml')]: renderCrdTemplate(CdnCluster, {
      labelsTemplate: 'opkit-lib.v1.labels',
      annotationsTemplate: 'opkit-lib.v1.annotations',
      generator: GENERATOR,
    }),
    [join(chart, 'templates/_rules.tpl')]: renderRulesTemplate(CHART, CDN_RULES, GENERATOR),
  };
}
