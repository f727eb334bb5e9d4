import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { findBinary } from '../assets/binaries.js';
import { verifySignature } from '../containers/sign.js';
import { run } from '../run.js';
import { isMap } from './chart.js';
import { parseHelmDigest } from './publish.js';

/** An image a chart's values name: where, and by what reference (undefined when not pinned by digest). */
export interface ChartImage {
  path: string[];
  repository: string;
  /** `registry/repository@sha256:…`, or undefined when the values pin no digest. */
  ref?: string;
}

/**
 * Every image map in a chart's values (a map with a string `repository`, as opkit-lib's imageRef
 * reads them), with the reference it pins: `global.imageRegistry` where it names no registry, as
 * the templates render it. Pure.
 */
export function chartImages(values: Record<string, unknown>): ChartImage[] {
  const global = isMap(values.global) && typeof values.global.imageRegistry === 'string' ? values.global.imageRegistry : '';
  const out: ChartImage[] = [];
  const walk = (v: unknown, path: string[]) => {
    if (!isMap(v)) return;
    if (typeof v.repository === 'string') {
      const registry = (typeof v.registry === 'string' && v.registry) || global;
      const repo = registry ? `${registry.replace(/\/$/, '')}/${v.repository}` : v.repository;
      const digest = typeof v.digest === 'string' && /^sha256:[0-9a-f]{64}$/.test(v.digest) ? v.digest : undefined;
      out.push({ path, repository: v.repository, ref: digest ? `${repo}@${digest}` : undefined });
      return;
    }
    for (const [k, child] of Object.entries(v)) walk(child, [...path, k]);
  };
  walk(values, []);
  return out;
}

/** A chart checked before install: its `oci://…@sha256:…` reference and the images it was found to pin. */
export interface VerifiedChart {
  ref: string;
  digest: string;
  images: string[];
}

export interface VerifySignedChartOptions {
  /** `localhost:5001/charts/memcached-operator`: the chart's repository, without oci://. */
  repository: string;
  version: string;
  publicKey: string;
  plainHttp?: boolean;
  /** cosign's private home. */
  home: string;
  /** helm's environment (a private HELM_*_HOME). */
  helmEnv?: NodeJS.ProcessEnv;
  /** The values the install will use: every image the chart renders with them must be a verified one. */
  values?: Record<string, unknown>;
}

/** Every container image in rendered manifests (containers, initContainers, ephemeralContainers, at any depth). Pure. */
export function renderedImages(objects: unknown[]): string[] {
  const found = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isMap(v)) return;
    for (const [k, child] of Object.entries(v)) {
      if ((k === 'containers' || k === 'initContainers' || k === 'ephemeralContainers') && Array.isArray(child)) {
        for (const c of child) if (isMap(c) && typeof c.image === 'string') found.add(c.image);
      }
      walk(child);
    }
  };
  objects.forEach(walk);
  return [...found].sort();
}

/**
 * What an installer checks before `helm install`, as a platform team's policy would: the chart
 * version resolved to a digest once (helm prints what it pulled; TLS and credentials as helm has
 * them), a signature on that digest by the key, the signed chart being the name and version asked
 * for (a validly signed older release swapped in under the tag is refused), every image map in its
 * values pinned by digest and signed by the key, and, given the install's values, every container
 * image it renders one of those. Returns the chart by digest, so what is installed is what was
 * verified even if the tag moves meanwhile. Rejects with a SignatureError (unsigned or tampered
 * chart or image) or an Error naming what else is wrong.
 */
export async function verifySignedChart(options: VerifySignedChartOptions): Promise<VerifiedChart> {
  const helm = findBinary('helm');
  const http = options.plainHttp ? ['--plain-http'] : [];
  const sign = { plainHttp: options.plainHttp, home: options.home };
  const resolved = await run(helm, ['show', 'chart', `oci://${options.repository}`, '--version', options.version, ...http], { env: options.helmEnv });
  const digest = parseHelmDigest(`${resolved.stdout}\n${resolved.stderr}`);
  await verifySignature(`${options.repository}@${digest}`, options.publicKey, sign);
  const ref = `oci://${options.repository}@${digest}`;
  const meta = parse((await run(helm, ['show', 'chart', ref, ...http], { env: options.helmEnv })).stdout) as { name?: string; version?: string };
  const name = options.repository.split('/').pop();
  if (meta.name !== name || meta.version !== options.version) {
    throw new Error(`${ref} is ${meta.name}:${meta.version}, signed, but not the ${name}:${options.version} asked for`);
  }
  const shown = await run(helm, ['show', 'values', ref, ...http], { env: options.helmEnv });
  const images = chartImages((parse(shown.stdout) ?? {}) as Record<string, unknown>);
  const unpinned = images.filter((i) => !i.ref);
  if (unpinned.length) throw new Error(`${ref}: images not pinned by digest: ${unpinned.map((i) => `${i.path.join('.')} (${i.repository})`).join(', ')}`);
  for (const image of images) await verifySignature(image.ref!, options.publicKey, sign);
  const verified = images.map((i) => i.ref!);
  if (options.values) {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-verify-'));
    try {
      writeFileSync(join(dir, 'values.yaml'), stringify(options.values));
      const rendered = await run(helm, ['template', 'verify', ref, ...http, '--values', join(dir, 'values.yaml')], { env: options.helmEnv });
      const other = renderedImages(parseAllDocuments(rendered.stdout).map((d) => d.toJS() as unknown)).filter((i) => !verified.includes(i));
      if (other.length) throw new Error(`${ref}: with these values it runs images not verified: ${other.join(', ')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { ref, digest, images: verified };
}
