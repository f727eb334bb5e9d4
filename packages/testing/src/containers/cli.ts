// The container tooling from the command line (npm run containers -- <command>):
//   engine           start (or install and start) a Docker engine if none answers, and say what runs
//   engine-stop      stop the engine opkit started, if no other process uses it
//   (engine, kind-prepare and engine-stop take --for-pid <pid>: the process the engine is held for)
//   images [names…]  build the local images (all, or these recipes), printing their tags and sizes
//   kind-node        build the kind node image (and everything in it)
//   kind-prepare     everything the kind e2e mode needs, built ahead of the suites (npm test runs
//                    it); says why and exits 0 where the kind mode cannot run
//   app-image <app> [--tag t]  build an app's image (nx run @opkit/<app>:docker-build)
//   bundle-image <app>         build an app's OLM bundle image (nx run @opkit/<app>:bundle-image)
import { ensureEngine, stopEngine } from './engine.js';
import { imageSize } from './docker.js';
import { buildAppImage, buildBundleImage, imageFor, pebbleImage } from './images.js';
import { kindUnavailable } from '../e2e/kind-cluster.js';
import { imageApps } from '../e2e/workspace.js';
import { ensureKindNodeImage } from './kind-node-image.js';
import { ensureKindToolset } from './kind-toolset.js';
import { ensureImage, recipes } from './local-images.js';
import { describeQuirks } from './machine.js';
import { hostPlatform, RELEASE_PLATFORMS } from './platforms.js';
import { ensureLocalRegistry } from './registry.js';
import { buildToolset } from '../assets/build-toolset.js';
import { say, seconds } from './progress.js';

const [command = 'engine', ...rest] = process.argv.slice(2);
// --for-pid <pid>: hold (or release) the engine for that process, not this short-lived one.
const forPidAt = rest.indexOf('--for-pid');
const holder = forPidAt >= 0 ? { forPid: Number(rest[forPidAt + 1]) } : {};

async function main(): Promise<number> {
  switch (command) {
    case 'engine': {
      const engine = await ensureEngine(holder);
      if (!engine.available) {
        say(`no container engine: ${engine.reason}`);
        return 1;
      }
      say(`Docker ${engine.server}${engine.managed ? ' (started by opkit)' : ''}; ${describeQuirks(engine.quirks)}`);
      return 0;
    }
    case 'engine-stop':
      await stopEngine(holder);
      return 0;
    case 'images': {
      const engine = await ensureEngine(holder);
      if (!engine.available) throw new Error(`no container engine: ${engine.reason}`);
      const names = rest.length ? rest : Object.keys(recipes);
      for (const name of names) {
        const recipe = Object.hasOwn(recipes, name) ? recipes[name as keyof typeof recipes] : undefined;
        if (!recipe) throw new Error(`no image recipe ${name} (known: ${Object.keys(recipes).join(', ')})`);
        const tag = await ensureImage(recipe);
        say(`${name}: ${tag} (${((imageSize(tag) ?? 0) / 2 ** 20).toFixed(1)} MiB)`);
      }
      return 0;
    }
    case 'kind-node': {
      const engine = await ensureEngine(holder);
      if (!engine.available) throw new Error(`no container engine: ${engine.reason}`);
      const tag = await ensureKindNodeImage();
      say(`kind node image: ${tag} (${((imageSize(tag) ?? 0) / 2 ** 20).toFixed(1)} MiB)`);
      return 0;
    }
    case 'kind-prepare': {
      const why = kindUnavailable();
      if (why) {
        say(`kind mode skipped: ${why}`);
        return 0;
      }
      const t0 = Date.now();
      const engine = await ensureEngine(holder);
      if (!engine.available) {
        say(`kind mode skipped: ${engine.reason}`);
        return 0;
      }
      const step = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
        const s0 = Date.now();
        const r = await fn();
        say(`✓ ${what} (${seconds(s0)})`);
        return r;
      };
      await step('kind and its node image', () => ensureKindToolset(engine.quirks));
      await step('the local registry (distribution), running', () => ensureLocalRegistry());
      await step('cosign and syft', () => buildToolset(['--only', 'cosign,syft'], '[containers]'));
      for (const app of imageApps()) await step(`image of ${app}`, () => buildAppImage(app));
      for (const w of ['memcached', 'nginx', 'traefik', 'shell'] as const) await step(`${w} image`, () => imageFor(w));
      await step('pebble image', () => pebbleImage());
      // The release test builds every platform a release does; another than this machine's needs
      // its runtime base, built under QEMU the first time (minutes): here, with progress shown.
      for (const p of RELEASE_PLATFORMS.filter((p) => p !== hostPlatform()))
        await step(`the ${p} runtime base, for the release's ${p} images`, () => imageFor('nodeRuntime', p));
      say(`the kind mode is ready to run (${seconds(t0)})`);
      return 0;
    }
    case 'app-image': {
      const [app] = rest;
      if (!app) throw new Error('app-image needs an app: app-image <app> [--tag <tag>]');
      const engine = await ensureEngine(holder);
      if (!engine.available) throw new Error(`cannot build an image: no container engine (${engine.reason})`);
      const tagAt = rest.indexOf('--tag');
      const ref = await buildAppImage(app, tagAt > 0 ? rest[tagAt + 1] : undefined);
      say(`${ref}: ${((imageSize(ref) ?? 0) / 2 ** 20).toFixed(1)} MiB`);
      return 0;
    }
    case 'bundle-image': {
      const [app] = rest;
      if (!app) throw new Error('bundle-image needs an app: bundle-image <app>');
      const engine = await ensureEngine(holder);
      if (!engine.available) throw new Error(`cannot build an image: no container engine (${engine.reason})`);
      const ref = await buildBundleImage(app);
      say(`${ref}: ${((imageSize(ref) ?? 0) / 2 ** 10).toFixed(1)} KiB`);
      return 0;
    }
    default:
      console.error(`unknown command ${command}`);
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`[containers] ${err.message}`);
    process.exit(1);
  },
);
