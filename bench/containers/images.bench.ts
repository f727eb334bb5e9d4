// Build times (cold and warm) and sizes of every image the kind mode builds on a machine where no
// registry answers, and the time to create a kind cluster from the node image built here.
//   cold: the image and BuildKit's cache removed first (the Debian base is bootstrapped again, Node
//         fetched again from the npm cache, apt packages downloaded again);
//   warm: built again at once: everything is taken from the engine's store or BuildKit's cache.
// Go builds (kubelet, kind, CoreDNS, Traefik) are not in here: tools/control-plane prints their
// times when it builds them, and they are cached by version like the control-plane binaries.
import {
  buildAppImage,
  docker,
  ensureDebianBase,
  ensureEngine,
  ensureImage,
  ensureKindNodeImage,
  ensureKindToolset,
  imageSize,
  LOCAL_PREFIX,
  pebbleImage,
  recipes,
} from '@opkit/testing/containers';
import { findBinary } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { mib, table, runBench } from '../report.js';

const time = async (fn: () => Promise<string>) => {
  const t0 = Date.now();
  const tag = await fn();
  return { tag, s: (Date.now() - t0) / 1000 };
};

const APPS = ['memcached-operator', 'cdn-operator', 'cert-operator', 'acme-solver'];

async function main() {
  const engine = await ensureEngine();
  if (!engine.available) {
    console.log(`no container engine: ${engine.reason}`);
    return;
  }
  const steps: [string, () => Promise<string>][] = [
    ['Debian base (debootstrap)', ensureDebianBase],
    ['static base', () => ensureImage(recipes.static)],
    ['Node build base', () => ensureImage(recipes.nodeBuild)],
    ['Node runtime base', () => ensureImage(recipes.nodeRuntime)],
    ['memcached (Debian)', () => ensureImage(recipes.memcached)],
    ['nginx (Debian)', () => ensureImage(recipes.nginx)],
    ['shell (Debian)', () => ensureImage(recipes.shell)],
    ['traefik', () => ensureImage(recipes.traefik)],
    ['pebble', pebbleImage],
    ['kind node image (base, 7 images, import)', ensureKindNodeImage],
    ...APPS.map((app): [string, () => Promise<string>] => [`${app} image`, () => buildAppImage(app)]),
  ];
  // Cold: every opkit.local image and the app images removed, BuildKit's cache pruned.
  const local = spawnSync('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((r) => r.startsWith(`${LOCAL_PREFIX}/`) || APPS.some((a) => r.startsWith(`opkit/${a}:`)));
  if (local.length) await docker(['rmi', '-f', ...local], { check: false });
  await docker(['builder', 'prune', '-af'], { check: false });
  const rows: Record<string, string | number>[] = [];
  const cold: Record<string, number> = {};
  for (const [label, fn] of steps) cold[label] = (await time(fn)).s;
  for (const [label, fn] of steps) {
    const warm = await time(fn);
    rows.push({ image: label, 'cold s': cold[label] ?? NaN, 'warm s': warm.s, 'size MiB': mib(imageSize(warm.tag) ?? 0), tag: warm.tag });
  }
  table(rows);

  // kind create cluster from the node image, twice.
  const toolset = await ensureKindToolset(engine.quirks);
  const dir = mkdtempSync(join(tmpdir(), 'opkit-bench-kind-'));
  const config = join(dir, 'kind.yaml');
  writeFileSync(config, stringify(toolset.config));
  const creates: Record<string, string | number>[] = [];
  for (const run of ['first', 'second']) {
    const t0 = Date.now();
    const r = spawnSync(
      toolset.kind,
      ['create', 'cluster', '--name', 'opkit-bench', ...(toolset.nodeImage ? ['--image', toolset.nodeImage] : []), '--config', config, '--wait', '180s'],
      { encoding: 'utf8' },
    );
    const created = (Date.now() - t0) / 1000;
    // Ready for workloads: CoreDNS answering (its pods Ready), not only the node.
    const t1 = Date.now();
    spawnSync(
      findBinary('kubectl'),
      ['--context', 'kind-opkit-bench', 'wait', '-n', 'kube-system', '--for=condition=Ready', 'pod', '-l', 'k8s-app=kube-dns', '--timeout=180s'],
      { encoding: 'utf8' },
    );
    creates.push({
      run,
      'kind create (node Ready) s': created,
      '+ CoreDNS Ready s': (Date.now() - t1) / 1000,
      ok: r.status === 0 ? 'yes' : r.stderr.slice(-200),
    });
    spawnSync(toolset.kind, ['delete', 'cluster', '--name', 'opkit-bench']);
  }
  rmSync(dir, { recursive: true, force: true });
  table(creates);
  console.log(
    `load average: ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runBench(main);
