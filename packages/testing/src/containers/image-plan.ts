import { versions } from '../assets/binaries.js';

/** The registries the official images come from, by the host their API answers on. */
export const REGISTRIES = { 'docker.io': 'registry-1.docker.io', 'gcr.io': 'gcr.io' } as const;
export type Registry = keyof typeof REGISTRIES;

/** Every image the e2e kind mode needs that is not this repository's own. */
export const OFFICIAL_IMAGES = {
  /** Build stage of the apps' Dockerfile: Node with npm. */
  nodeBuild: { ref: `node:${versions.node}-bookworm-slim`, registry: 'docker.io' },
  /** Runtime stage: Node without a shell or package manager, uid 65532. */
  nodeRuntime: { ref: 'gcr.io/distroless/nodejs24-debian12:nonroot', registry: 'gcr.io' },
  /** The base of static Go binaries (Pebble). */
  static: { ref: 'gcr.io/distroless/static-debian12:nonroot', registry: 'gcr.io' },
  /** kind's own default node image (undefined ref: kind picks it). */
  kindNode: { ref: undefined, registry: 'docker.io' },
  memcached: { ref: 'memcached:1.6.38-alpine', registry: 'docker.io' },
  nginx: { ref: 'nginx:1.28.0-alpine', registry: 'docker.io' },
  traefik: { ref: `traefik:${versions.traefik}`, registry: 'docker.io' },
  /** A Debian with bash, for in-cluster clients in the e2e specs. */
  shell: { ref: `debian:${versions.debian}-slim`, registry: 'docker.io' },
} as const satisfies Record<string, { ref: string | undefined; registry: Registry }>;

export type ImageRole = keyof typeof OFFICIAL_IMAGES;
export type ImageSource = 'official' | 'local';

/**
 * Where each image comes from: the official image where its registry answers, else one built
 * here from Debian's packages and this repository's Go builds (never re-tagged with an official
 * name). OPKIT_IMAGES=official|local forces one source for all.
 */
export function imagePlan(answers: Partial<Record<Registry, boolean>>, force?: string): Record<ImageRole, ImageSource> {
  const plan = {} as Record<ImageRole, ImageSource>;
  for (const [role, img] of Object.entries(OFFICIAL_IMAGES) as [ImageRole, (typeof OFFICIAL_IMAGES)[ImageRole]][]) {
    plan[role] = force === 'official' || force === 'local' ? force : answers[img.registry] ? 'official' : 'local';
  }
  return plan;
}

/** Whether each registry answers HTTPS at all (any status, 401 included), within 5 s. */
export async function probeRegistries(): Promise<Record<Registry, boolean>> {
  const entries = await Promise.all(
    (Object.entries(REGISTRIES) as [Registry, string][]).map(async ([name, host]) => {
      const ok = await fetch(`https://${host}/v2/`, { signal: AbortSignal.timeout(5_000) }).then(
        () => true,
        () => false,
      );
      return [name, ok] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Registry, boolean>;
}
