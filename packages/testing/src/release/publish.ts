import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pinnedBases } from '../containers/bases.js';
import { buildAppImage, buildBundleImage } from '../containers/images.js';
import { say } from '../containers/progress.js';
import { archOf, hostPlatform, type Platform } from '../containers/platforms.js';
import { pushImage, pushIndex, type PlatformImage, type PushedImage, type PushedIndex } from '../containers/push.js';
import { imageSbom } from '../containers/sbom.js';
import { attestSbom, signArtifact, type SigningKey } from '../containers/sign.js';
import { workspaceApp, workspaceRoot } from '../e2e/workspace.js';
import { publishChart, type PublishedChart } from '../helm/publish.js';
import { renderBundle } from '../olm/bundle.js';

/** Where a release goes: a registry host and the path every artifact is put under. */
export interface ReleaseTarget {
  /** `localhost:5001`, `ghcr.io`. */
  host: string;
  /** `opkit`, `acme/operators`: images at host/path/<app>, charts at host/path/charts/<chart>, bundles at host/path/<app>-bundle. */
  path: string;
  /** The registry speaks plain HTTP (the local one). */
  plainHttp: boolean;
}

/** `localhost:5001/opkit` → host and path, refusing what no registry would take. Pure. */
export function parseTarget(prefix: string, plainHttp = false): ReleaseTarget {
  const [host, ...rest] = prefix
    .replace(/^oci:\/\//, '')
    .replace(/\/+$/, '')
    .split('/');
  const path = rest.join('/');
  if (!host || !/^[a-z0-9.-]+(:\d+)?$/i.test(host)) throw new Error(`--registry ${prefix}: no registry host (give host[:port]/path, e.g. ghcr.io/acme)`);
  if (!path)
    throw new Error(`--registry ${prefix}: give a path under the host (e.g. ${host}/opkit), so images, charts and bundles have a namespace of their own`);
  if (!/^[a-z0-9]+([._/-][a-z0-9]+)*$/.test(path)) throw new Error(`--registry ${prefix}: ${path} is not a repository path (lower case, digits, . _ - /)`);
  return { host, path, plainHttp };
}

/** How artifacts are signed: the key, and cosign's private home. */
export interface Signer {
  key: SigningKey;
  home: string;
}

const versionOf = (root: string, app: string) => workspaceApp(app, root).image.tag;

/**
 * Builds each app's image for every platform, pushes it under the target, signs it and attaches
 * its SBOM as a signed attestation, all by digest. `source` is the repository the charts name it
 * by (opkit/<app>). For several platforms, each platform's image is pushed as
 * `<version>-<arch>` and an index of them as `<version>`: the index is what charts pin, and it and
 * each platform's image are signed; each platform's image carries its own SBOM (their Debian
 * packages and Node builds differ).
 */
export async function publishImages(
  apps: string[],
  target: ReleaseTarget,
  signer: Signer,
  workDir: string,
  root = workspaceRoot(),
  platforms: readonly Platform[] = [hostPlatform()],
): Promise<PushedImage[]> {
  const out: PushedImage[] = [];
  const opts = { plainHttp: target.plainHttp, home: signer.home };
  // Every platform's bases first: one this machine cannot build (no emulator for a base built
  // here) fails the release before any app is built or pushed. Official bases need no emulation.
  const bases = await pinnedBases(target.host, target.path, platforms);
  for (const app of apps) {
    const version = versionOf(root, app);
    const parts: PlatformImage[] = [];
    for (const p of platforms) {
      const tag = platforms.length === 1 ? version : `${version}-${archOf(p)}`;
      const local = await buildAppImage(app, tag, bases.get(p), p);
      parts.push({ platform: p, image: await pushImage(local, target.host, `${target.path}/${app}`, tag, `opkit/${app}`) });
    }
    const image =
      parts.length === 1
        ? parts[0]!.image
        : await pushIndex(parts, target.host, `${target.path}/${app}`, version, { plainHttp: target.plainHttp, source: `opkit/${app}` });
    await signArtifact(image.ref, signer.key, opts);
    for (const { platform, image: part } of parts) {
      if (part !== image) await signArtifact(part.ref, signer.key, opts);
      const sbomFile = join(workDir, parts.length === 1 ? `${app}.spdx.json` : `${app}-${archOf(platform)}.spdx.json`);
      await attestSbom(part.ref, await imageSbom(part.ref, sbomFile, opts), signer.key, opts);
    }
    say(`published and signed ${image.ref} (${image.tag}${parts.length > 1 ? `: ${platforms.join(', ')}` : ''}), with its SBOM${parts.length > 1 ? 's' : ''}`);
    out.push(image);
  }
  return out;
}

/** Packages each chart with the images pinned by digest, pushes it under target/charts and signs it. */
export async function publishCharts(
  charts: string[],
  images: PushedImage[],
  target: ReleaseTarget,
  signer: Signer,
  helmEnv?: NodeJS.ProcessEnv,
  root = workspaceRoot(),
): Promise<PublishedChart[]> {
  const out: PublishedChart[] = [];
  for (const name of charts) {
    const chart = await publishChart(join(root, 'charts', name), images, {
      target: `${target.host}/${target.path}/charts`,
      plainHttp: target.plainHttp,
      env: helmEnv,
    });
    await signArtifact(`${chart.ref.slice('oci://'.length)}@${chart.digest}`, signer.key, { plainHttp: target.plainHttp, home: signer.home });
    say(`published and signed ${chart.ref}:${chart.version} (${chart.pins.map((p) => `${p.path.join('.')} → ${p.ref}`).join(', ')})`);
    out.push(chart);
  }
  return out;
}

/**
 * Each operator's OLM bundle, rendered with its images pinned by digest (and listed as the CSV's
 * relatedImages), built into an image, pushed as host/path/<app>-bundle:v<version> and signed.
 */
export async function publishBundles(
  apps: string[],
  images: PushedImage[],
  target: ReleaseTarget,
  signer: Signer,
  root = workspaceRoot(),
): Promise<PushedImage[]> {
  const out: PushedImage[] = [];
  for (const app of apps) {
    const version = versionOf(root, app);
    const files = await renderBundle(app, root, { images });
    const ctx = mkdtempSync(join(tmpdir(), 'opkit-bundle-'));
    try {
      for (const [rel, content] of Object.entries(files)) {
        mkdirSync(dirname(join(ctx, rel)), { recursive: true });
        writeFileSync(join(ctx, rel), content);
      }
      const local = await buildBundleImage(app, `v${version}-release`, ctx);
      const image = await pushImage(local, target.host, `${target.path}/${app}-bundle`, `v${version}`, `opkit/${app}-bundle`);
      await signArtifact(image.ref, signer.key, { plainHttp: target.plainHttp, home: signer.home });
      say(`published and signed ${image.ref} (v${version})`);
      out.push(image);
    } finally {
      rmSync(ctx, { recursive: true, force: true });
    }
  }
  return out;
}

/** What a release published, by digest: written beside it as release.json. */
export interface ReleaseManifest {
  target: string;
  /** Each image's `ref` is what the charts pin: an index where several platforms were built, with each platform's image in `platforms`. */
  images: { source: string; ref: string; tag: string; platforms?: { platform: string; ref: string; tag: string }[] }[];
  charts: { name: string; version: string; ref: string; digest: string; pins: { path: string; ref: string }[] }[];
  bundles: { source: string; ref: string; tag: string }[];
  /** The public key the signatures verify with (keyed releases). */
  publicKey: string;
}

export interface PublishReleaseOptions {
  target: ReleaseTarget;
  signer: Signer;
  /** Apps shipped as images; default every app with a docker-build target. */
  images: string[];
  /** Charts; default every operator chart. */
  charts: string[];
  /** Operators with OLM bundles. */
  bundles: string[];
  /** The images' platforms; default this machine's. */
  platforms?: readonly Platform[];
  workDir: string;
  helmEnv?: NodeJS.ProcessEnv;
  root?: string;
}

/** The whole publishing phase of a release: images (signed, with SBOMs), charts pinned to them, bundles; all signed. */
export async function publishRelease(o: PublishReleaseOptions): Promise<ReleaseManifest> {
  const root = o.root ?? workspaceRoot();
  mkdirSync(o.workDir, { recursive: true });
  const images = await publishImages(o.images, o.target, o.signer, o.workDir, root, o.platforms);
  const charts = await publishCharts(o.charts, images, o.target, o.signer, o.helmEnv, root);
  const bundles = await publishBundles(o.bundles, images, o.target, o.signer, root);
  const publicKey = join(o.workDir, 'cosign.pub');
  cpSync(o.signer.key.publicKey, publicKey);
  const manifest: ReleaseManifest = {
    target: `${o.target.host}/${o.target.path}`,
    images: images.map((i) => ({
      source: i.source,
      ref: i.ref,
      tag: i.tag,
      ...('platforms' in i ? { platforms: (i as PushedIndex).platforms.map((p) => ({ platform: p.platform, ref: p.image.ref, tag: p.image.tag })) } : {}),
    })),
    charts: charts.map((c) => ({
      name: c.name,
      version: c.version,
      ref: c.ref,
      digest: c.digest,
      pins: c.pins.map((p) => ({ path: p.path.join('.'), ref: p.ref })),
    })),
    bundles: bundles.map((b) => ({ source: b.source, ref: b.ref, tag: b.tag })),
    publicKey,
  };
  writeFileSync(join(o.workDir, 'release.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
