import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderBundle } from './bundle.js';

/** The bundle's files at their paths: apps/<app>/bundle/{manifests,metadata}/ and apps/<app>/bundle.Dockerfile. */
export async function bundleFiles(app: string, root: string): Promise<Record<string, string>> {
  const rendered = await renderBundle(app, root);
  return Object.fromEntries(
    Object.entries(rendered).map(([rel, content]) =>
      rel === 'bundle.Dockerfile'
        ? [
            join(root, 'apps', app, 'bundle.Dockerfile'),
            content
              .replace('COPY manifests /manifests/', 'COPY bundle/manifests /manifests/')
              .replace('COPY metadata /metadata/', 'COPY bundle/metadata /metadata/'),
          ]
        : [join(root, 'apps', app, 'bundle', rel), content],
    ),
  );
}

/** The bundle files whose content on disk differs from what would be written now. */
export async function staleBundleFiles(app: string, root: string): Promise<[string, string][]> {
  return Object.entries(await bundleFiles(app, root)).filter(([path, content]) => !existsSync(path) || readFileSync(path, 'utf8') !== content);
}
