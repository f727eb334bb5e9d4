// npm run release -- <phase> …: how a maintainer cuts a release (docs/releasing.md).
//   version <specifier> [--dry-run]   one version for every package and app (nx release version),
//                                     the charts, their READMEs, the OLM bundles and CHANGELOG.md
//   publish --registry <host/path> [--plain-http] [--key cosign.key] [--platforms list] [--out dir]
//                                     the four images (linux/amd64 and linux/arm64 by default, an
//                                     index of both; signed, with SBOM attestations), the three
//                                     charts (images pinned by digest, signed) and the three OLM
//                                     bundles (signed), pushed under host/path; release.json lists them
//   publish-npm [--npm-registry <url>] [--no-provenance] [--out dir]
//                                     the three npm packages, built, staged as published and
//                                     `npm publish`ed (to npm's configured registry by default)
//   local-registry                    start the local registry (localhost:5001) and print its address
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildToolset } from '../assets/build-toolset.js';
import { ensureEngine } from '../containers/engine.js';
import { runLong, say, seconds } from '../containers/progress.js';
import { parsePlatforms, RELEASE_PLATFORMS } from '../containers/platforms.js';
import { ensureLocalRegistry } from '../containers/registry.js';
import { generateKeyPair, type SigningKey } from '../containers/sign.js';
import { imageApps, workspaceRoot } from '../e2e/workspace.js';
import { NPM_PACKAGES, publishPackages } from './npm.js';
import { parseTarget, publishRelease } from './publish.js';
import { checkedOutVersion, operatorApps, versionRelease } from './version.js';

/** The flags, each defined once: name, whether it takes a value, what it is for. */
const FLAGS = {
  '--dry-run': { value: false, help: 'version: show what would change, change nothing' },
  '--registry': { value: true, help: 'publish: host[:port]/path every artifact goes under' },
  '--plain-http': { value: false, help: 'publish: the registry speaks plain HTTP (a local one)' },
  '--platforms': {
    value: true,
    help: `publish: the images' platforms, comma-separated (default: ${RELEASE_PLATFORMS.join(',')}; another than this machine's is built under QEMU)`,
  },
  '--key': { value: true, help: "publish: cosign's private key (its password in COSIGN_PASSWORD); default: a new key pair in --out" },
  '--out': {
    value: true,
    help: 'publish, publish-npm: where release.json, the SBOMs and the public key, or the staged packages, go (default: dist/release/<version>)',
  },
  '--npm-registry': { value: true, help: "publish-npm: the npm registry's URL (default: npm's configured one)" },
  '--no-provenance': { value: false, help: 'publish-npm: no provenance statement (outside a CI that gives npm an OIDC identity)' },
} as const;
type Flag = keyof typeof FLAGS;

/** argv → phase, positional arguments and flags; unknown flags are refused. Pure. */
export function parseArgs(argv: string[]): { phase?: string; positional: string[]; flags: Partial<Record<Flag, string | true>> } {
  const positional: string[] = [];
  const flags: Partial<Record<Flag, string | true>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.split('=', 2) as [string, string | undefined];
    if (!Object.hasOwn(FLAGS, name)) throw new Error(`unknown flag ${name} (known: ${Object.keys(FLAGS).join(', ')})`);
    const def = FLAGS[name as Flag];
    if (def.value) {
      const value = inline ?? argv[++i];
      if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value: ${def.help}`);
      flags[name as Flag] = value;
    } else flags[name as Flag] = true;
  }
  const [phase, ...rest] = positional;
  return { phase, positional: rest, flags };
}

async function main(): Promise<number> {
  const { phase, positional, flags } = parseArgs(process.argv.slice(2));
  const root = workspaceRoot();
  switch (phase) {
    case 'version': {
      const [specifier] = positional;
      if (!specifier) throw new Error('version needs a specifier: version <x.y.z|major|minor|patch|prerelease>');
      const r = await versionRelease({ specifier, dryRun: flags['--dry-run'] === true, root });
      if (r.changed.length) {
        say(`v${r.version}: changed ${r.changed.join(', ')} (and the package.json files and lock file nx release listed)`);
        say(
          `review, then: git add -A && git commit -m "release: v${r.version}" && git tag v${r.version}; then npm run release -- publish --registry <host/path>`,
        );
      }
      return 0;
    }
    case 'publish': {
      const registry = flags['--registry'];
      if (typeof registry !== 'string') throw new Error(`publish needs --registry: ${FLAGS['--registry'].help}`);
      const target = parseTarget(registry, flags['--plain-http'] === true);
      const platforms = typeof flags['--platforms'] === 'string' ? parsePlatforms(flags['--platforms']) : [...RELEASE_PLATFORMS];
      const engine = await ensureEngine();
      if (!engine.available) throw new Error(`publishing builds images: no container engine (${engine.reason})`);
      await buildToolset(['--only', 'cosign,syft,helm'], '[release]');
      const version = checkedOutVersion(root);
      const out = resolve(typeof flags['--out'] === 'string' ? flags['--out'] : join(root, 'dist/release', version));
      const home = mkdtempSync(join(tmpdir(), 'opkit-release-'));
      let key: SigningKey;
      if (typeof flags['--key'] === 'string') {
        const privateKey = resolve(flags['--key']);
        // cosign's pair is <name>.key and <name>.pub; anything else could make the private key the one published.
        if (!privateKey.endsWith('.key')) throw new Error(`--key ${privateKey}: give cosign's private key, <name>.key, with <name>.pub beside it`);
        const publicKey = `${privateKey.slice(0, -'.key'.length)}.pub`;
        if (!existsSync(privateKey) || !existsSync(publicKey))
          throw new Error(`--key ${privateKey}: needs the private key and its public key beside it (${publicKey})`);
        key = { privateKey, publicKey, password: process.env.COSIGN_PASSWORD ?? '' };
      } else {
        key = await generateKeyPair(join(out, 'signing'));
        say(`signing with a key pair made for this release: ${key.privateKey} (keep it private), ${key.publicKey} (publish it)`);
      }
      const t0 = Date.now();
      const operators = operatorApps(root);
      const manifest = await publishRelease({
        target,
        signer: { key, home: join(home, 'sigstore') },
        images: imageApps(root),
        charts: operators,
        bundles: operators,
        platforms,
        workDir: out,
        root,
      });
      say(
        `published v${version} to ${manifest.target} in ${seconds(t0)}: ${manifest.images.length} images (${platforms.join(', ')}), ${manifest.charts.length} charts, ${manifest.bundles.length} bundles; ${join(out, 'release.json')}`,
      );
      for (const c of manifest.charts) say(`  helm install ${c.name.replace(/-operator$/, '')} ${c.ref}@${c.digest}${target.plainHttp ? ' --plain-http' : ''}`);
      return 0;
    }
    case 'publish-npm': {
      const version = checkedOutVersion(root);
      const out = resolve(typeof flags['--out'] === 'string' ? flags['--out'] : join(root, 'dist/release', version, 'npm'));
      say(`building ${NPM_PACKAGES.map((p) => `packages/${p}`).join(', ')}…`);
      await runLong('npx', ['nx', 'run-many', '-t', 'build', '-p', ...NPM_PACKAGES.map((p) => `@opkit/${p}`), '--outputStyle=stream'], {
        cwd: root,
        label: 'nx build',
      });
      const registry = flags['--npm-registry'];
      const published = await publishPackages({
        root,
        outDir: out,
        registry: typeof registry === 'string' ? registry : undefined,
        provenance: flags['--no-provenance'] !== true,
      });
      for (const p of published) say(`published ${p.name}@${p.version} (staged in ${p.dir})`);
      return 0;
    }
    case 'local-registry': {
      const engine = await ensureEngine();
      if (!engine.available) throw new Error(`no container engine: ${engine.reason}`);
      const registry = await ensureLocalRegistry();
      say(`local registry: ${registry.host} (plain HTTP; on the kind network ${registry.inNetwork})`);
      return 0;
    }
    default:
      console.error(
        `usage: npm run release -- version <specifier> [--dry-run] | publish --registry <host/path> [--plain-http] [--key cosign.key] [--platforms linux/amd64,linux/arm64] [--out dir] | publish-npm [--npm-registry <url>] [--no-provenance] [--out dir] | local-registry`,
      );
      return 2;
  }
}

if (process.argv[1]?.endsWith('release-cli.cjs') || process.argv[1]?.endsWith('release-cli.ts')) {
  main().then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`[release] ${err.message}`);
      process.exit(1);
    },
  );
}
