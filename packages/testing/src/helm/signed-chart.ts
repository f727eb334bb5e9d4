import { parse } from 'yaml';
import { findBinary } from '../assets/binaries.js';
import { manifestDigest } from '../containers/push.js';
import { verifySignature } from '../containers/sign.js';
import { run } from '../run.js';

/** An image a chart's values name: where, and by what reference (undefined when not pinned by digest). */
export interface ChartImage {
  path: string[];
  repository: string;
  /** `registry/repository@sha256:…`, or undefined when the values pin no digest. */
  ref?: string;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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
}

/**
 * What an installer checks before `helm install`, as a platform team's policy would: the chart
 * version's digest (the tag resolved once, here), a signature on that digest by the key, and in
 * its values every image pinned by digest and signed by the key too. Returns the chart by digest,
 * so what is installed is what was verified even if the tag moves meanwhile. Rejects with a
 * SignatureError (unsigned or tampered chart or image) or an Error naming an unpinned image.
 */
export async function verifySignedChart(options: VerifySignedChartOptions): Promise<VerifiedChart> {
  const [host, ...rest] = options.repository.split('/');
  const digest = await manifestDigest(host!, rest.join('/'), options.version);
  await verifySignature(`${options.repository}@${digest}`, options.publicKey, { plainHttp: options.plainHttp, home: options.home });
  const ref = `oci://${options.repository}@${digest}`;
  const shown = await run(findBinary('helm'), ['show', 'values', ref, ...(options.plainHttp ? ['--plain-http'] : [])], { env: options.helmEnv });
  const images = chartImages((parse(shown.stdout) ?? {}) as Record<string, unknown>);
  const unpinned = images.filter((i) => !i.ref);
  if (unpinned.length) throw new Error(`${ref}: images not pinned by digest: ${unpinned.map((i) => `${i.path.join('.')} (${i.repository})`).join(', ')}`);
  for (const image of images) await verifySignature(image.ref!, options.publicKey, { plainHttp: options.plainHttp, home: options.home });
  return { ref, digest, images: images.map((i) => i.ref!) };
}
