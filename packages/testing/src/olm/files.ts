import { join } from 'node:path';
import { renderBundle } from './bundle.js';

/** The bundle's files at their paths: apps/<app>/bundle/{manifests,metadata}/ and apps/<app>/bundle.Dockerfile. */
export async function bundleFiles(app: string, root: string): Promise<Record<string, string>> {
  const rendered = await renderBundle(app, root);
  return Object.fromEntries(
    Object.entries(rendered).map(([rel, content]) =>
      rel === 'bundle.Dockerfile'
        ? [join(root, 'apps', app, 'bundle.Dockerfile'), content.replace('COPY manifests /manifests/', 'COPY bundle/manifests /manifests/').replace('COPY metadata /metadata/', 'COPY bundle/metadata /metadata/')]
        : [join(root, 'apps', app, 'bundle', rel), content],
    ),
  );
}
