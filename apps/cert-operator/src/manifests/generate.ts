// The chart files derived from code: the CRDs (from the TypeBox schemas) and the RBAC rules (from
// the rules declared next to the controllers).
import {
  mergeRules,
  renderCrdTemplate,
  renderRulesTemplate,
  renderValuesSchema,
  renderValuesYaml,
  renderWebhooksTemplate,
  type CustomResource,
} from '@opkit/runtime';
import { certWebhooks } from '../webhooks/index.js';
import { join } from 'node:path';
import { CERT_APIS } from '../api/index.js';
import { Ingress } from '@opkit/runtime';
import { acmeRbac, certificatesRbac, shimRbac } from '../controllers/rbac.js';
import { Gateway } from '../shim/gateway.js';

export const CHART = 'cert-operator';
export const GENERATOR = 'nx run @opkit/cert-operator:generate';
const API = CERT_APIS.opkit;
export const CUSTOM_RESOURCES: CustomResource<any, any>[] = API.resources;
export const RBAC = mergeRules(certificatesRbac(API), acmeRbac(API), shimRbac(API, Ingress), shimRbac(API, Gateway));

export function generatedFiles(repoRoot: string): Record<string, string> {
  const chart = join(repoRoot, 'charts', CHART);
  const files: Record<string, string> = {
    [join(chart, 'templates/_rules.tpl')]: renderRulesTemplate(CHART, RBAC, GENERATOR),
    [join(chart, 'values.schema.json')]: renderValuesSchema(chart, join(repoRoot, 'charts/opkit-lib')),
    [join(chart, 'values.yaml')]: renderValuesYaml(chart, join(repoRoot, 'charts/opkit-lib'), GENERATOR),
    [join(chart, 'templates/webhooks.yaml')]: renderWebhooksTemplate({ admission: certWebhooks(API) }, { generator: GENERATOR, chart: CHART }),
  };
  for (const cr of CUSTOM_RESOURCES) {
    files[join(chart, `templates/crds/${cr.definition.group}_${cr.definition.plural}.yaml`)] = renderCrdTemplate(cr, {
      labelsTemplate: 'opkit-lib.v1.labels',
      annotationsTemplate: 'opkit-lib.v1.annotations',
      generator: GENERATOR,
    });
  }
  return files;
}
