import { Conditions, defineCustomResource, ResourceRequirements, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';

/** nginx when spec.image is empty: pinned, never a moving tag. */
export const DEFAULT_IMAGE = 'nginx:1.28.0-alpine';

const DNS1123_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export const Source = Type.Object({
  name: Type.String({ pattern: DNS1123_LABEL, maxLength: 63, description: 'Name of another CdnCluster in the same namespace.' }),
  pathCondition: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Regular expression on the request path; requests matching it go to this source. Omit for the default route.',
    }),
  ),
});

export const CdnClusterSpec = Type.Object(
  {
    role: Type.Union([Type.Literal('balancer'), Type.Literal('cache')], {
      description: 'balancer routes by path to its sources; cache caches what its sources or origin serve.',
    }),
    // Absent, null and [] all mean "no sources" (the original Go operator crashed on null).
    sources: Type.Optional(Type.Array(Source, { maxItems: 32, nullable: true, description: 'Clusters this one sends requests to.' })),
    origin: Type.Optional(
      Type.String({
        pattern: '^https?://[^\\s/]+(/\\S*)?$',
        maxLength: 2048,
        description:
          'Upstream URL for a cache with no default source. A host name is resolved per request through the cluster DNS (use a fully qualified name, e.g. origin.media.svc.cluster.local): the cache starts and serves its other routes while it does not resolve, and follows its address when it changes.',
      }),
    ),
    replicas: Type.Integer({ minimum: 0, maximum: 1000, default: 1, description: 'Number of nginx pods.' }),
    image: Type.String({ minLength: 1, default: DEFAULT_IMAGE, description: `The nginx image (default ${DEFAULT_IMAGE}).` }),
    resources: Type.Optional(ResourceRequirements),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: '!has(self.sources) || self.sources.filter(s, !has(s.pathCondition)).size() <= 1',
        message: 'at most one source may omit pathCondition (it is the default route)',
      },
      {
        rule: '!has(self.sources) || self.sources.all(s, self.sources.exists_one(t, t.name == s.name))',
        message: 'source names must be unique',
      },
    ],
  },
);

export const CdnClusterStatus = Type.Object({
  state: Type.Optional(
    Type.Union(
      ['WaitingSource', 'Deploying', 'Running', 'Degraded', 'Error'].map((s) => Type.Literal(s)),
      {
        description:
          'WaitingSource (a source does not exist yet), Deploying, Running, Degraded (running, but a source was lost or a change could not be applied) or Error.',
      },
    ),
  ),
  message: Type.Optional(Type.String({ description: 'Why the cluster is in its state, for humans.' })),
  observedGeneration: Type.Optional(Type.Integer({ description: 'The metadata.generation this status was computed from.' })),
  readyReplicas: Type.Optional(Type.Integer({ description: 'nginx pods ready to serve.' })),
  configHash: Type.Optional(Type.String({ description: 'Hash of the nginx configuration the pods run.' })),
  sourceNames: Type.Optional(
    Type.String({ description: 'The sources, comma-separated, or "origin" (for the Sources column: kubectl prints only the first element of a list).' }),
  ),
  upstreams: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String({ description: 'Source cluster, or "origin".' }),
        pathCondition: Type.Optional(Type.String({ description: 'The path expression routed to it; absent for the default route.' })),
        address: Type.Optional(Type.String({ description: 'Where requests go (ClusterIP:port or origin URL).' })),
        ready: Type.Boolean({ description: 'Whether the upstream has ready pods (or is the origin).' }),
      }),
      { description: 'Where the rendered nginx configuration sends requests, one entry per route.' },
    ),
  ),
  conditions: Type.Optional(Conditions),
});

export const CdnCluster = defineCustomResource({
  group: 'cdn.opkit.dev',
  version: 'v1',
  kind: 'CdnCluster',
  plural: 'cdnclusters',
  shortNames: ['cdn'],
  categories: ['opkit'],
  scope: 'Namespaced',
  description: 'A cluster of nginx balancers or caches; clusters name other clusters as their sources.',
  spec: CdnClusterSpec,
  status: CdnClusterStatus,
  printerColumns: [
    { name: 'Role', type: 'string', jsonPath: '.spec.role' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Sources', type: 'string', jsonPath: '.status.sourceNames' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type CdnClusterObject = Cached<NonNullable<(typeof CdnCluster.kind)['__type']>>;
export type SourceRef = { name: string; pathCondition?: string };
