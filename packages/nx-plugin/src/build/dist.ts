// The nx plugin's build (`nx run @opkit/nx-plugin:build`), what it publishes. In this repository nx
// loads the generators from source (src/load.cjs compiles each on first use); the published plugin
// carries them compiled, with their templates and schemas beside them, its own collection
// (dist/generators.json: stagePackage points `generators` at it), and the shared files a new
// workspace gets (the preset's template: generators/preset/template.ts), so it needs neither
// esbuild nor this repository.
import { execFileSync } from 'node:child_process';
import { build, type Plugin } from 'esbuild';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ADAPTED_FILES, COPIED_DIRS, COPIED_FILES, shippedPath } from '../generators/preset/template.js';

interface GeneratorsJson {
  generators: Record<string, { factory: string; schema: string; description: string }>;
}

/** The files git knows under `dir` (so a vendored chart or a build output never ships). */
const filesUnder = (root: string, dir: string) =>
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', dir], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);

/**
 * A generator finds its templates beside its source (import.meta.dirname). Compiled, every
 * generator sits in dist/generators/<name>/ with its templates, and one bundle may hold several
 * generators (the preset runs the operator generator): each generator's source gets its own folder.
 */
const generatorDirs: Plugin = {
  name: 'generator-dirs',
  setup(b) {
    b.onLoad({ filter: /[\\/]generators[\\/][\w-]+[\\/]generator\.ts$/ }, (args) => {
      const name = basename(dirname(args.path));
      const contents = readFileSync(args.path, 'utf8').replaceAll('import.meta.dirname', `require('node:path').join(__dirname, '..', ${JSON.stringify(name)})`);
      return { contents, loader: 'ts' };
    });
  },
};

/** Builds packages/nx-plugin/dist: each generator bundled (CommonJS, as nx requires it), its files and schema, the collection, the workspace template. */
export async function buildPluginDist(root: string): Promise<void> {
  const pkgDir = join(root, 'packages/nx-plugin');
  const dist = join(pkgDir, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const generatorsJson = JSON.parse(readFileSync(join(pkgDir, 'generators.json'), 'utf8')) as GeneratorsJson;
  const { generators } = generatorsJson;
  for (const name of Object.keys(generators)) {
    const src = join(pkgDir, 'src/generators', name);
    const out = join(dist, 'generators', name);
    await build({
      entryPoints: [join(src, 'generator.ts')],
      outfile: join(out, 'generator.cjs'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      plugins: [generatorDirs],
      logLevel: 'warning',
    });
    cpSync(join(src, 'schema.json'), join(out, 'schema.json'));
    for (const entry of readdirSync(src)) if (statSync(join(src, entry)).isDirectory()) cpSync(join(src, entry), join(out, entry), { recursive: true });
  }
  const collection = {
    ...generatorsJson,
    generators: Object.fromEntries(
      Object.entries(generators).map(([name, g]) => [
        name,
        { ...g, factory: `./generators/${name}/generator.cjs#default`, schema: `./generators/${name}/schema.json` },
      ]),
    ),
  };
  writeFileSync(join(dist, 'generators.json'), `${JSON.stringify(collection, null, 2)}\n`);
  const workspace = join(dist, 'workspace');
  const files = [...COPIED_FILES, ...ADAPTED_FILES, ...COPIED_DIRS.flatMap((d) => filesUnder(root, d))];
  for (const f of files) {
    mkdirSync(join(workspace, shippedPath(f), '..'), { recursive: true });
    cpSync(join(root, f), join(workspace, shippedPath(f)));
  }
}
