import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { PushedImage } from '../containers/push.js';
import { helmTemplate } from '../helm/chart.js';
import { pinImages } from '../helm/publish.js';
import { chartImages } from '../helm/signed-chart.js';
import { workspaceRoot } from '../e2e/workspace.js';

/**
 * What a bundle says about an operator beyond its chart: apps/<app>/olm.yaml. The capability level
 * is stated with why (operator-sdk's levels: Basic Install, Seamless Upgrades, Full Lifecycle, Deep
 * Insights, Auto Pilot), as OperatorHub shows it.
 */
export interface OperatorMetadata {
  displayName: string;
  description: string;
  capabilities: 'Basic Install' | 'Seamless Upgrades' | 'Full Lifecycle' | 'Deep Insights' | 'Auto Pilot';
  capabilitiesWhy: string;
  categories: string[];
  keywords: string[];
  maturity: 'alpha' | 'beta' | 'stable';
  minKubeVersion: string;
  /** displayName and description per owned kind. */
  kinds: Record<string, { displayName: string; description: string }>;
}

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  [k: string]: any;
};

/** Where OLM mounts the certificate of webhooks it manages (tls.crt, tls.key). */
export const OLM_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
const CHANNEL = 'alpha';

/**
 * An OLM bundle (registry+v1) for an operator, from what its chart renders and its olm.yaml:
 * `manifests/` (the ClusterServiceVersion, the CRDs, the metrics Service and reader role) and
 * `metadata/annotations.yaml`, plus the `bundle.Dockerfile` that packs them. Under OLM, OLM owns
 * what the chart otherwise makes for the operator: the ServiceAccount and its roles come from the
 * CSV's permissions, the webhooks from its webhookdefinitions (OLM issues their certificate and
 * injects the CA: the operator serves `--webhook-cert-dir`), WATCH_NAMESPACE from the
 * OperatorGroup's target namespaces.
 */
export async function renderBundle(app: string, root = workspaceRoot(), options: { images?: PushedImage[] } = {}): Promise<Record<string, string>> {
  const appDir = join(root, 'apps', app);
  const meta = parse(readFileSync(join(appDir, 'olm.yaml'), 'utf8')) as OperatorMetadata;
  const version = (JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as { version: string }).version;
  // Released, the images are pinned by digest as in the published chart, and listed as the CSV's
  // relatedImages (what a disconnected cluster mirrors); in the repository, named by tag.
  const pinned = options.images
    ? (parse(pinImages(readFileSync(join(root, 'charts', app, 'values.yaml'), 'utf8'), options.images).yaml) as Record<string, unknown>)
    : undefined;
  const related = pinned ? chartImages(pinned).map((i) => ({ name: i.repository.split('/').pop()!, image: i.ref! })) : [];
  const operatorImage = options.images?.find((i) => i.source === `opkit/${app}`);
  const image = operatorImage?.ref ?? `opkit/${app}:${version}`;
  const yaml = await helmTemplate(join(root, 'charts', app), {
    release: app,
    namespace: 'operators',
    values: { ...pinned, tests: { enabled: false }, fullnameOverride: app },
  });
  const objects = parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const sa = of('ServiceAccount')[0]!.metadata.name;
  const boundToOperator = (kind: 'ClusterRoleBinding' | 'RoleBinding') =>
    new Set(
      of(kind)
        .filter((b) => b.subjects?.some((s: { name: string }) => s.name === sa))
        .map((b) => b.roleRef.name),
    );
  const clusterRoles = boundToOperator('ClusterRoleBinding');
  const roles = boundToOperator('RoleBinding');
  // What keeping its own webhook certificate needs is OLM's part under OLM (--webhook-cert-dir).
  const olmKeeps = (name: string) => name.endsWith('-ca-injection') || name.endsWith('-webhook-certificates');
  const rules = (kind: string, names: Set<string>) =>
    of(kind)
      .filter((r) => names.has(r.metadata.name) && !olmKeeps(r.metadata.name))
      .flatMap((r) => r.rules ?? []);

  const crds = of('CustomResourceDefinition');
  const deployment = of('Deployment')[0]!;
  const container = deployment.spec.template.spec.containers[0];
  // The namespace-bound flags are OLM's to decide; the webhook certificate is OLM's to keep.
  container.args = (container.args as string[])
    .filter((a) => !/^--(leader-election-namespace|webhook-secret-name|webhook-host|webhook-configuration-name)=/.test(a))
    .concat(container.ports?.some((p: { name: string }) => p.name === 'webhook') ? [`--webhook-cert-dir=${OLM_WEBHOOK_CERT_DIR}`] : []);
  container.image = image;
  container.env = (container.env as { name: string }[]).map((e) =>
    e.name === 'WATCH_NAMESPACE' ? { name: 'WATCH_NAMESPACE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } } : e,
  );

  const webhookdefinitions: Record<string, unknown>[] = [];
  for (const cfg of [...of('MutatingWebhookConfiguration'), ...of('ValidatingWebhookConfiguration')]) {
    for (const w of cfg.webhooks) {
      webhookdefinitions.push({
        type: cfg.kind === 'MutatingWebhookConfiguration' ? 'MutatingAdmissionWebhook' : 'ValidatingAdmissionWebhook',
        generateName: w.name,
        deploymentName: deployment.metadata.name,
        containerPort: 443,
        targetPort: 'webhook',
        webhookPath: w.clientConfig.service.path,
        admissionReviewVersions: w.admissionReviewVersions,
        sideEffects: w.sideEffects,
        failurePolicy: w.failurePolicy,
        timeoutSeconds: w.timeoutSeconds,
        matchPolicy: w.matchPolicy,
        rules: w.rules,
      });
    }
  }
  const converted = crds.filter((c) => c.spec.conversion?.strategy === 'Webhook');
  if (converted.length) {
    webhookdefinitions.push({
      type: 'ConversionWebhook',
      generateName: `convert.${app}.opkit.dev`,
      deploymentName: deployment.metadata.name,
      containerPort: 443,
      targetPort: 'webhook',
      webhookPath: converted[0]!.spec.conversion.webhook.clientConfig.service.path,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      conversionCRDs: converted.map((c) => c.metadata.name),
    });
    // OLM fills in the conversion webhook's clientConfig; the bundle's CRD names none.
    for (const c of converted)
      c.spec.conversion = {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { service: { name: `${app}-webhook`, namespace: 'operators', path: c.spec.conversion.webhook.clientConfig.service.path, port: 443 } },
        },
      };
  }

  const owned = crds.flatMap((c) =>
    (c.spec.versions as { name: string; served: boolean }[])
      .filter((v) => v.served)
      .map((v) => ({
        name: c.metadata.name,
        version: v.name,
        kind: c.spec.names.kind,
        displayName: meta.kinds[c.spec.names.kind]?.displayName ?? c.spec.names.kind,
        description: meta.kinds[c.spec.names.kind]?.description ?? c.spec.versions[0].schema.openAPIV3Schema.description ?? c.spec.names.kind,
      })),
  );
  const examplesDir = join(appDir, 'examples');
  const examples = existsSync(examplesDir)
    ? readdirSync(examplesDir)
        .filter((f) => f.endsWith('.yaml'))
        .sort()
        .flatMap((f) =>
          parseAllDocuments(readFileSync(join(examplesDir, f), 'utf8'))
            .map((d) => d.toJS() as Obj | null)
            .filter((o): o is Obj => !!o && owned.some((k) => k.kind === o.kind && o.apiVersion.endsWith(`/${k.version}`))),
        )
    : [];

  const name = `${app}.v${version}`;
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name,
      annotations: {
        'alm-examples': JSON.stringify(examples, null, 2),
        capabilities: meta.capabilities,
        categories: meta.categories.join(', '),
        containerImage: image,
        description: meta.description.split('\n')[0]!,
        'operators.operatorframework.io/builder': 'opkit',
        repository: 'https://github.com/opkit/opkit',
        support: 'opkit',
      },
    },
    spec: {
      displayName: meta.displayName,
      description: `${meta.description}\n\n**Capability level: ${meta.capabilities}.** ${meta.capabilitiesWhy}`,
      version,
      maturity: meta.maturity,
      minKubeVersion: meta.minKubeVersion,
      keywords: meta.keywords,
      provider: { name: 'opkit' },
      maintainers: [{ name: 'opkit', email: 'maintainers@opkit.dev' }],
      links: [{ name: 'Source', url: 'https://github.com/opkit/opkit' }],
      // A CRD conversion webhook serves every namespace: OLM allows such an operator only
      // cluster-wide (its validator says so). The others may watch some namespaces.
      installModes: (['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'] as const).map((type) => ({
        type,
        supported: type === 'AllNamespaces' || !converted.length,
      })),
      customresourcedefinitions: { owned },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [{ name: deployment.metadata.name, label: deployment.metadata.labels, spec: deployment.spec }],
          clusterPermissions: [{ serviceAccountName: sa, rules: rules('ClusterRole', clusterRoles) }],
          permissions: [{ serviceAccountName: sa, rules: rules('Role', roles) }],
        },
      },
      ...(webhookdefinitions.length ? { webhookdefinitions } : {}),
      ...(related.length ? { relatedImages: related } : {}),
    },
  };

  const files: Record<string, string> = {};
  const header = `# Generated by nx run @opkit/${app}:bundle from charts/${app} and apps/${app}/olm.yaml. Do not edit by hand.\n`;
  files[`manifests/${app}.clusterserviceversion.yaml`] = header + stringify(csv, { lineWidth: 0, aliasDuplicateObjects: false });
  for (const c of crds) {
    const { annotations: _a, labels: _l, ...metadata } = c.metadata;
    files[`manifests/${c.spec.group}_${c.spec.names.plural}.yaml`] = header + stringify({ ...c, metadata }, { lineWidth: 0, aliasDuplicateObjects: false });
  }
  // Beside the CSV: what Prometheus needs (the Service) and the role to bind its ServiceAccount to.
  for (const o of [
    ...of('Service').filter((s) => s.spec.ports.some((p: { name: string }) => p.name === 'metrics')),
    ...of('ClusterRole').filter((r) => r.metadata.name.endsWith('-metrics-reader')),
  ]) {
    const { namespace: _n, ...metadata } = o.metadata;
    files[`manifests/${o.metadata.name}_${o.kind.toLowerCase()}.yaml`] = header + stringify({ ...o, metadata }, { lineWidth: 0, aliasDuplicateObjects: false });
  }
  const annotations = {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': app,
    'operators.operatorframework.io.bundle.channels.v1': CHANNEL,
    'operators.operatorframework.io.bundle.channel.default.v1': CHANNEL,
  };
  files['metadata/annotations.yaml'] = header + stringify({ annotations });
  files['bundle.Dockerfile'] = [
    header.trimEnd(),
    '# Build: nx run @opkit/' + app + ':bundle, then docker build -f bundle.Dockerfile -t <registry>/' + app + '-bundle:v' + version + ' .',
    'FROM scratch',
    ...Object.entries(annotations).map(([k, v]) => `LABEL ${k}=${v}`),
    'COPY manifests /manifests/',
    'COPY metadata /metadata/',
    '',
  ].join('\n');
  return files;
}
