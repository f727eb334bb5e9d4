import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { isPair, isScalar, parse, parseDocument, visit, type YAMLMap } from 'yaml';
import { findBinary } from '../assets/binaries.js';
import type { PushedImage } from '../containers/push.js';
import { run } from '../run.js';
import { chartImages } from './signed-chart.js';
import { vendorChartDependencies } from './vendor.js';

/** Where in values.yaml an image was pinned (`['image']`, `['acme', 'solver', 'image']`), and to what. */
export interface Pin {
  path: string[];
  ref: string;
}

/**
 * values.yaml with every image map whose `repository` is the source of one of `images` pinned to
 * it: `registry`, `repository`, `tag` and `digest` set, so the chart pulls exactly what was pushed
 * (the digest wins over the tag; the tag stays for people reading `kubectl get pods`). Comments and
 * order are kept: the packaged chart's values are the documented ones with their image fields filled in. Pure.
 */
export function pinImages(valuesYaml: string, images: PushedImage[]): { yaml: string; pins: Pin[] } {
  const doc = parseDocument(valuesYaml);
  const pins: Pin[] = [];
  visit(doc, {
    Map(_key, node, path) {
      const repository = node.get('repository', true);
      if (!isScalar(repository) || typeof repository.value !== 'string') return;
      const image = images.find((i) => i.source === repository.value);
      if (!image) return;
      const map = node as YAMLMap<unknown, unknown>;
      map.set('registry', image.registry);
      map.set('repository', image.repository);
      map.set('tag', image.tag);
      map.set('digest', image.digest);
      const keys = path.filter(isPair).map((p) => String(isScalar(p.key) ? p.key.value : p.key));
      pins.push({ path: keys, ref: image.ref });
    },
  });
  return { yaml: doc.toString({ lineWidth: 0 }), pins };
}

/** A chart in an OCI registry. */
export interface PublishedChart {
  name: string;
  version: string;
  /** `oci://<registry>/<path>/<name>`: what `helm install` takes, with `--version`. */
  ref: string;
  /** The chart artifact's manifest digest, as the registry computed it. */
  digest: string;
  /** The images written into its values. */
  pins: Pin[];
}

/** The chart digest helm reports after a push or pull (`Digest: sha256:…`). Pure. */
export function parseHelmDigest(output: string): string {
  const m = /^Digest:\s*(sha256:[0-9a-f]{64})\s*$/m.exec(output);
  if (!m) throw new Error(`helm reported no digest: ${output.trim().slice(-500)}`);
  return m[1]!;
}

export interface PublishChartOptions {
  /** `localhost:5001/charts`: registry host and path the chart goes under. */
  target: string;
  /** The registry speaks plain HTTP (the local one). */
  plainHttp?: boolean;
  /** helm's environment (a private HELM_*_HOME). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Packages a chart with its images pinned by digest (in a copy: the source chart keeps its
 * defaults) and pushes it as an OCI artifact. Every image in its values must be among `images`.
 */
export async function publishChart(chartDir: string, images: PushedImage[], options: PublishChartOptions): Promise<PublishedChart> {
  await vendorChartDependencies(chartDir);
  const meta = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string };
  const work = mkdtempSync(join(tmpdir(), 'opkit-chart-'));
  try {
    const copy = join(work, basename(chartDir));
    cpSync(chartDir, copy, { recursive: true });
    const { yaml, pins } = pinImages(readFileSync(join(copy, 'values.yaml'), 'utf8'), images);
    // Every image map pinned, as installs will demand: a chart naming an image nobody pushed would
    // be published and then refused (or install and never start).
    const unpinned = chartImages(parse(yaml) as Record<string, unknown>).filter((i) => !i.ref);
    if (unpinned.length) {
      throw new Error(
        `${meta.name}: images not among the pushed ones (${images.map((i) => i.source).join(', ')}): ${unpinned.map((i) => `${i.path.join('.')} (${i.repository})`).join(', ')}`,
      );
    }
    writeFileSync(join(copy, 'values.yaml'), yaml);
    const helm = findBinary('helm');
    await run(helm, ['package', copy, '--destination', work], { env: options.env });
    const tgz = join(work, `${meta.name}-${meta.version}.tgz`);
    const pushed = await run(helm, ['push', tgz, `oci://${options.target}`, ...(options.plainHttp ? ['--plain-http'] : [])], { env: options.env });
    const digest = parseHelmDigest(`${pushed.stdout}\n${pushed.stderr}`);
    return { name: meta.name, version: meta.version, ref: `oci://${options.target}/${meta.name}`, digest, pins };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
