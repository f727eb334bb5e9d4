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
import { Challenge } from '../api/acme/v1/challenge.js';
import { Order } from '../api/acme/v1/order.js';
import { Certificate } from '../api/v1/certificate.js';
import { CertificateRequest } from '../api/v1/certificaterequest.js';
import { ClusterIssuer, Issuer } from '../api/v1/issuer.js';
import { Ingress } from '@opkit/runtime';
import { acmeRbac, certificatesRbac, shimRbac } from '../controllers/rbac.js';
import { Gateway } from '../shim/gateway.js';

export const CHART = 'cert-operator';
export const GENERATOR = 'nx run @opkit/cert-operator:generate';
export const CUSTOM_RESOURCES: CustomResource<any, any>[] = [Issuer, ClusterIssuer, Certificate, CertificateRequest, Order, Challenge];
export const RBAC = mergeRules(certificatesRbac, acmeRbac, shimRbac(Ingress), shimRbac(Gateway));

export function generatedFiles(repoRoot: string): Record<string, string> {
  const chart = join(repoRoot, 'charts', CHART);
  const files: Record<string, string> = {
    [join(chart, 'templates/_rules.tpl')]: renderRulesTemplate(CHART, RBAC, GENERATOR),
    [join(chart, 'values.schema.json')]: renderValuesSchema(chart, join(repoRoot, 'charts/opkit-lib')),
    [join(chart, 'values.yaml')]: renderValuesYaml(chart, join(repoRoot, 'charts/opkit-lib'), GENERATOR),
    [join(chart, 'templates/webhooks.yaml')]: renderWebhooksTemplate({ admission: certWebhooks() }, { generator: GENERATOR, chart: CHART }),
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
