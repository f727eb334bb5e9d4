// The chart files derived from code: the CRD (from the TypeBox schemas of both versions), the
// webhooks (conversion), and the RBAC rules (from the rules declared next to the controller).
import { mergeRules, renderCrdTemplate, renderRulesTemplate, renderValuesSchema, renderValuesYaml, renderWebhooksTemplate } from '@opkit/runtime';
import { join } from 'node:path';
import { MemcachedAPI } from '../api/conversion.js';
import { memcachedRbac } from '../controllers/memcached/rbac.js';

export const CHART = 'memcached-operator';
export const GENERATOR = 'nx run @opkit/memcached-operator:generate';

export function generatedFiles(repoRoot: string): Record<string, string> {
  const chart = join(repoRoot, 'charts', CHART);
  return {
    [join(chart, 'values.schema.json')]: renderValuesSchema(chart, join(repoRoot, 'charts/opkit-lib')),
    [join(chart, 'values.yaml')]: renderValuesYaml(chart, join(repoRoot, 'charts/opkit-lib'), GENERATOR),
    [join(chart, 'templates/crds/cache.opkit.dev_memcacheds.yaml')]: renderCrdTemplate(MemcachedAPI, {
      labelsTemplate: 'opkit-lib.v1.labels',
      annotationsTemplate: 'opkit-lib.v1.annotations',
      clientConfigTemplate: 'opkit-lib.v1.webhookClientConfig',
      generator: GENERATOR,
    }),
    [join(chart, 'templates/webhooks.yaml')]: renderWebhooksTemplate({ conversions: [MemcachedAPI] }, { generator: GENERATOR, chart: CHART }),
    [join(chart, 'templates/_rules.tpl')]: renderRulesTemplate(CHART, mergeRules(memcachedRbac), GENERATOR),
  };
}
