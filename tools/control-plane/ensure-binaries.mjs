#!/usr/bin/env node
// Builds the control-plane toolset (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// kubectl, kwok, helm, helm-docs, pebble) from Go modules into a versioned cache directory, once.
//
// Why build from source: no container registry or release download is reachable where opkit is
// developed, but the Go module proxy is. Each tool lives in its own wrapper module under ./go/ so
// minimal version selection never mixes one tool's dependencies with another's.
//
// Three groups: `control-plane` (the default: what integration tests and the local e2e mode run),
// `kind` (what the kind e2e mode adds: the node's kubelet, kubeadm and kube-proxy, kind itself,
// CoreDNS, Traefik as the in-cluster ingress controller, CNCF distribution's registry, cosign and
// syft) and `comparators` (what runs beside opkit's operators in tests and benches: cert-manager's
// controller, wired by our own main.go from cert-manager's library; a DNS-01 webhook solver of its
// framework; cmctl, its CLI; and the AWS Private CA issuer, an external issuer; not needed by the
// demo).
//
// Usage: node tools/control-plane/ensure-binaries.mjs [--group kind] [--only kubernetes,etcd,...] [--print-dir] [--quiet]
// Idempotent: a stamp per tool records what was built; a second run takes well under a second.
// Binaries already present in $KUBEBUILDER_ASSETS are used as they are and never rebuilt.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
// In this repository the versions sit in @opkit/testing's source; in the copy that package ships
// (dist/tooling/control-plane), beside its compiled assets (dist/assets).
const versionsFiles = [join(root, 'packages/testing/src/assets/versions.json'), join(root, 'assets/versions.json')];
const versions = JSON.parse(readFileSync(versionsFiles.find((f) => existsSync(f)) ?? versionsFiles[0], 'utf8'));

export function cacheDir() {
  const base = process.env.OPKIT_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'opkit');
  return join(base, 'k8s', versions.kubernetes);
}

const k8sStamp = (v) => {
  const [maj, min] = v.replace(/^v/, '').split('.');
  const date = '2026-01-01T00:00:00Z'; // fixed so rebuilds are byte-reproducible
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((p) => [
    `-X ${p}.gitVersion=${v}`,
    `-X ${p}.gitMajor=${maj}`,
    `-X ${p}.gitMinor=${min}`,
    `-X ${p}.gitCommit=0000000000000000000000000000000000000000`,
    `-X ${p}.gitTreeState=clean`,
    `-X ${p}.buildDate=${date}`,
  ]);
};

/** What each wrapper module builds, and how its version is stamped so `--version` tells the truth. */
const tools = [
  {
    name: 'etcd',
    version: versions.etcd,
    binaries: [
      ['etcd', 'go.etcd.io/etcd/server/v3'],
      ['etcdctl', 'go.etcd.io/etcd/etcdctl/v3'],
    ],
    ldflags: [`-X go.etcd.io/etcd/api/v3/version.GitSHA=${versions.etcd}`],
  },
  {
    name: 'kubernetes',
    version: versions.kubernetes,
    binaries: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'].map((b) => [b, `k8s.io/kubernetes/cmd/${b}`]),
    ldflags: k8sStamp(versions.kubernetes),
  },
  // The kind node's own binaries, from the same wrapper module (so `kubeadm version` says the
  // version kubeadm derives its image tags from).
  {
    name: 'kubernetes-node',
    wrapper: 'kubernetes',
    group: 'kind',
    version: versions.kubernetes,
    binaries: ['kubelet', 'kubeadm', 'kube-proxy'].map((b) => [b, `k8s.io/kubernetes/cmd/${b}`]),
    ldflags: k8sStamp(versions.kubernetes),
    minutes: 'about 2 min for the three once kube-apiserver is built',
  },
  { name: 'kind', group: 'kind', version: versions.kind, binaries: [['kind', 'sigs.k8s.io/kind']], ldflags: [], minutes: 'about 2 min' },
  {
    name: 'coredns',
    group: 'kind',
    version: versions.coredns,
    binaries: [['coredns', 'github.com/coredns/coredns']],
    ldflags: [`-X github.com/coredns/coredns/coremain.GitCommit=${versions.coredns}`],
    minutes: 'about 5 min',
  },
  {
    name: 'traefik',
    group: 'kind',
    version: versions.traefik,
    binaries: [['traefik', 'github.com/traefik/traefik/v3/cmd/traefik']],
    ldflags: [`-X github.com/traefik/traefik/v3/pkg/version.Version=${versions.traefik}`],
    minutes: 'about 6 min',
  },
  // CNCF distribution's registry: the OCI registry the kind mode pushes the operators' images and
  // charts to, and the nodes pull them from (kind's documented local-registry setup).
  {
    name: 'registry',
    group: 'kind',
    version: versions.distribution,
    binaries: [['registry', 'github.com/distribution/distribution/v3/cmd/registry']],
    ldflags: [`-X github.com/distribution/distribution/v3/version.version=${versions.distribution}`],
    minutes: 'about 2 min',
  },
  // The supply chain of what the kind mode publishes: cosign signs and verifies images, charts and
  // attestations; syft writes each image's SBOM (SPDX), attached as a signed attestation.
  {
    name: 'cosign',
    group: 'kind',
    version: versions.cosign,
    binaries: [['cosign', 'github.com/sigstore/cosign/v2/cmd/cosign']],
    ldflags: [`-X sigs.k8s.io/release-utils/version.gitVersion=${versions.cosign}`],
    minutes: 'about 5 min',
  },
  {
    name: 'syft',
    group: 'kind',
    version: versions.syft,
    binaries: [['syft', 'github.com/anchore/syft/cmd/syft']],
    ldflags: [`-X main.version=${versions.syft.replace(/^v/, '')}`],
    minutes: 'about 5 min',
  },
  { name: 'kwok', version: versions.kwok, binaries: [['kwok', 'sigs.k8s.io/kwok/cmd/kwok']], ldflags: [] },
  {
    name: 'helm',
    version: versions.helm,
    binaries: [['helm', 'helm.sh/helm/v3/cmd/helm']],
    ldflags: (() => {
      const [maj, min] = versions.kubernetes.replace(/^v/, '').split('.');
      return [
        `-X helm.sh/helm/v3/internal/version.version=${versions.helm}`,
        `-X helm.sh/helm/v3/internal/version.gitTreeState=clean`,
        ...['pkg/chartutil', 'pkg/lint/rules'].flatMap((p) => [
          `-X helm.sh/helm/v3/${p}.k8sVersionMajor=${maj}`,
          `-X helm.sh/helm/v3/${p}.k8sVersionMinor=${min}`,
        ]),
      ];
    })(),
  },
  // The chart READMEs are generated from values.yaml comments (nx run <app>:chart-docs).
  {
    name: 'helm-docs',
    version: versions.helmDocs,
    binaries: [['helm-docs', 'github.com/norwoodj/helm-docs/cmd/helm-docs']],
    ldflags: [`-X main.version=${versions.helmDocs.replace(/^v/, '')}`],
  },
  // cert-manager's controller: the wrapper module holds a main.go of ours (cert-manager's own
  // command is a module the proxy does not serve), so the package built is the wrapper itself.
  {
    name: 'cert-manager',
    group: 'comparators',
    version: versions.certManager,
    binaries: [
      ['cert-manager-controller', '.'],
      // A DNS-01 webhook solver as cert-manager's DNS webhooks are built (its webhook server
      // framework around its own RFC 2136 solver), for the cert operator's webhook solver test: a
      // second binary of the same module and build cache.
      ['cert-manager-dns-webhook', './dns-webhook'],
    ],
    ldflags: [`-X github.com/cert-manager/cert-manager/pkg/util.AppVersion=${versions.certManager}`],
    minutes: 'about 4 min',
  },
  // cmctl, cert-manager's CLI, run against the cert operator in cert-manager API mode (its own
  // main package, so no wrapper code of ours).
  {
    name: 'cmctl',
    group: 'comparators',
    version: versions.cmctl,
    binaries: [['cmctl', 'github.com/cert-manager/cmctl/v2']],
    ldflags: [`-X github.com/cert-manager/cert-manager/pkg/util.AppVersion=${versions.cmctl}`, `-X k8s.io/client-go/pkg/version.gitVersion=${versions.cmctl}`],
    minutes: 'about 3 min',
  },
  // An external issuer, unchanged, for the cert operator in cert-manager mode: the AWS Private CA
  // issuer, pointed at a stand-in of the AWS Private CA API (@opkit/testing's aws-pca.ts).
  {
    name: 'aws-privateca-issuer',
    group: 'comparators',
    version: versions.awsPrivateCaIssuer,
    binaries: [['aws-privateca-issuer', 'github.com/cert-manager/aws-privateca-issuer']],
    ldflags: [],
    minutes: 'about 4 min',
  },
  {
    name: 'pebble',
    version: versions.pebble,
    binaries: [
      ['pebble', 'github.com/letsencrypt/pebble/v2/cmd/pebble'],
      ['pebble-challtestsrv', 'github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv'],
    ],
    // One change of ours, applied at build time (go build -overlay, the module cache untouched):
    // the authorization handler takes the requester's account before the authorization's lock.
    // Upstream's order takes them the other way round from a new order's authorization lookup,
    // and with a writer queued on the store the two wait for each other for good: the
    // 10,000-certificate bench stopped at 3,897 that way. v2.10.3 fixed the same pattern for orders.
    patches: [{ module: 'github.com/letsencrypt/pebble/v2', file: 'authz-lock-order.patch' }],
    ldflags: [`-X main.version=${versions.pebble}+opkit.authz-lock-order`],
  },
];

const log = (msg) => {
  if (!quiet) process.stdout.write(`${msg}\n`);
};
const fail = (msg) => {
  process.stderr.write(`\nensure-binaries: ${msg}\n`);
  process.exit(1);
};
const elapsed = (t0) => {
  const s = Math.round((Date.now() - t0) / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};
const ALT =
  'or set KUBEBUILDER_ASSETS to a directory that already holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok, helm, helm-docs, pebble and pebble-challtestsrv';

const args = process.argv.slice(2);
const quiet = args.includes('--quiet');
const onlyArg = args.find((a) => a.startsWith('--only'));
const groupArg = args.find((a) => a.startsWith('--group'));
const group = groupArg ? (groupArg.includes('=') ? groupArg.split('=')[1] : args[args.indexOf(groupArg) + 1]) : 'control-plane';
const only = onlyArg ? (onlyArg.includes('=') ? onlyArg.split('=')[1] : args[args.indexOf(onlyArg) + 1]).split(',') : null;

function goEnv() {
  return {
    ...process.env,
    GOTOOLCHAIN: 'local', // never try to download a toolchain: fail fast with our own message instead
    CGO_ENABLED: '0',
    GOFLAGS: '-mod=readonly -buildvcs=false',
  };
}

function checkGo() {
  const r = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8', env: goEnv() });
  if (r.error?.code === 'ENOENT') fail(`Go is not installed. Install Go >= ${versions.go} (https://go.dev/doc/install, or your package manager), ${ALT}.`);
  const m = /go(\d+)\.(\d+)/.exec(r.stdout || '');
  const [wantMaj, wantMin] = versions.go.split('.').map(Number);
  if (!m || Number(m[1]) < wantMaj || (Number(m[1]) === wantMaj && Number(m[2]) < wantMin)) {
    fail(`Go ${(r.stdout || '?').trim()} is too old: Kubernetes ${versions.kubernetes} needs Go >= ${versions.go}. Upgrade Go, ${ALT}.`);
  }
  return r.stdout.trim();
}

/** Runs a Go command, printing a heartbeat with a package count so long builds are never silent. */
function runGo(argv, cwd, label, env = {}) {
  return new Promise((resolvePromise, reject) => {
    const t0 = Date.now();
    let packages = 0;
    let tail = '';
    const child = spawn('go', argv, { cwd, env: { ...goEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (buf) => {
      const text = buf.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split('\n')) if (line && !line.startsWith('#') && !line.includes(' ')) packages++;
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const beat = setInterval(() => log(`    ${label}: ${packages ? `${packages} packages compiled, ` : ''}${elapsed(t0)} elapsed`), 15_000);
    const cleanup = () => {
      clearInterval(beat);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    const onSignal = (sig) => {
      child.kill(sig);
      cleanup();
      process.exit(130);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    child.on('error', (e) => {
      cleanup();
      reject(e);
    });
    child.on('close', (code) => {
      cleanup();
      if (code === 0) resolvePromise({ packages, seconds: (Date.now() - t0) / 1000 });
      else reject(Object.assign(new Error(`go ${argv[0]} failed (exit ${code})`), { tail }));
    });
  });
}

function explainGoFailure(err, what) {
  const tail = err.tail || err.message;
  const network = /proxy\.golang\.org|dial tcp|lookup .* no such host|connection refused|i\/o timeout|TLS handshake|403 Forbidden|410 Gone/.test(tail);
  fail(
    `${what} failed.\n${tail.split('\n').slice(-15).join('\n')}\n` +
      (network
        ? `The Go module proxy (${process.env.GOPROXY || 'https://proxy.golang.org'}) looks unreachable. Allow access to it (or set GOPROXY to a mirror), ${ALT}.`
        : `See the output above. If this persists, delete ${cacheDir()} and retry, ${ALT}.`),
  );
}

const wrapperOf = (tool) => join(here, 'go', tool.wrapper ?? tool.name);

function stampOf(tool, goVersion) {
  const dir = wrapperOf(tool);
  const h = createHash('sha256');
  // The module files and any Go source of ours in the wrapper: the top level (cert-manager's
  // main.go) and each package of the wrapper a binary is built from (./dns-webhook).
  const local = [...new Set(['.', ...tool.binaries.map(([, pkg]) => pkg).filter((pkg) => pkg.startsWith('./'))])];
  const ours = local.flatMap((pkg) =>
    readdirSync(join(dir, pkg))
      .filter((f) => f.endsWith('.go'))
      .sort()
      .map((f) => join(pkg, f)),
  );
  const patches = (tool.patches ?? []).map((p) => p.file);
  for (const f of ['go.mod', 'go.sum', ...ours, ...patches]) h.update(readFileSync(join(dir, f)));
  h.update(JSON.stringify(tool.ldflags));
  return { tool: tool.name, version: tool.version, go: goVersion, wrapper: h.digest('hex').slice(0, 16) };
}

/**
 * Applies a tool's patches (unified diffs in its wrapper directory, paths relative to the patched
 * module's root) to a copy of the module, and returns the environment that builds with the copy: a
 * Go workspace of the wrapper whose `replace` points at it. Go refuses overlays of files in its
 * module cache, and the cache stays as the proxy served it.
 */
function patchedEnv(tool, wrapper, into) {
  const replaces = [];
  for (const { module, file } of tool.patches) {
    const r = spawnSync('go', ['list', '-m', '-f', '{{.Dir}}', module], { cwd: wrapper, env: goEnv(), encoding: 'utf8' });
    if (r.status !== 0) fail(`Cannot find ${module} for ${tool.name}'s patch ${file}: ${r.stderr}`);
    const copy = join(into, module.replaceAll('/', '_'));
    cpSync(r.stdout.trim(), copy, { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', copy]); // the module cache's files are read-only
    // The ceiling keeps git from taking a repository above the copy (a cache inside a clone) as
    // the one to patch.
    const env = { ...process.env, GIT_CEILING_DIRECTORIES: into };
    const applied = spawnSync('git', ['apply', '-p1', join(wrapper, file)], { cwd: copy, env, encoding: 'utf8' });
    if (applied.status !== 0) fail(`${tool.name}'s patch ${file} does not apply to ${module}: ${applied.stderr || applied.error}`);
    replaces.push(`replace ${module} => ${copy}`);
  }
  const work = join(into, 'go.work');
  const goLine = /^go .*$/m.exec(readFileSync(join(wrapper, 'go.mod'), 'utf8'))[0];
  writeFileSync(work, [goLine, `use ${wrapper}`, ...replaces, ''].join('\n'));
  return { GOWORK: work };
}

async function ensure(tool, dir, goVersion, assets) {
  const inAssets = assets ? tool.binaries.filter(([b]) => existsSync(join(assets, b))).map(([b]) => b) : [];
  const wanted = tool.binaries.filter(([b]) => !inAssets.includes(b));
  if (!wanted.length) {
    log(`  ✓ ${tool.name}: using ${inAssets.join(', ')} from KUBEBUILDER_ASSETS`);
    return;
  }

  const stampFile = join(dir, '.stamps', `${tool.name}.json`);
  const stamp = goVersion ? stampOf(tool, goVersion) : null;
  const have = existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : '';
  const built = wanted.every(([b]) => existsSync(join(dir, b)));
  if (built && (!stamp || JSON.stringify(stamp) === have)) {
    log(`  ✓ ${tool.name} ${tool.version} (cached)`);
    return;
  }
  if (!stamp) checkGo(); // exits with a clear message

  const wrapper = wrapperOf(tool);
  const t0 = Date.now();
  log(`  • ${tool.name} ${tool.version}: downloading modules…`);
  await runGo(['mod', 'download'], wrapper, `${tool.name} download`).catch((e) => explainGoFailure(e, `Downloading the modules of ${tool.name}`));
  const tmp = join(dir, `.tmp-${tool.name}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const patched = tool.patches?.length ? patchedEnv(tool, wrapper, join(tmp, 'patched')) : {};
  for (const [bin, pkg] of wanted) {
    log(
      `  • ${tool.name}: building ${bin} (first time on 2 cores: ${tool.minutes ?? (tool.name === 'kubernetes' ? 'about 4 min for all four' : 'about a minute')})…`,
    );
    const ld = ['-s', '-w', ...tool.ldflags].join(' ');
    const r = await runGo(['build', '-trimpath', '-v', '-ldflags', ld, '-o', join(tmp, bin), pkg], wrapper, `${tool.name}/${bin}`, patched).catch((e) =>
      explainGoFailure(e, `Building ${bin}`),
    );
    log(`    ${bin}: done in ${Math.round(r.seconds)}s (${r.packages} packages compiled)`);
  }
  for (const [bin] of wanted) renameSync(join(tmp, bin), join(dir, bin));
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, JSON.stringify(stamp));
  log(`  ✓ ${tool.name} ${tool.version} built in ${elapsed(t0)}`);
}

async function main() {
  const dir = cacheDir();
  if (args.includes('--print-dir')) {
    process.stdout.write(`${dir}\n`);
    return;
  }
  const assets = process.env.KUBEBUILDER_ASSETS || '';
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  const title =
    { kind: 'kind toolset binaries', comparators: 'comparators (cert-manager, its DNS webhook solver, cmctl, aws-privateca-issuer)' }[group] ??
    'control-plane binaries';
  log(`${title} → ${dir}`);
  // Go is only needed when something must be built; a fully cached toolset works without it.
  const selected = tools.filter((t) => (only ? only.includes(t.name) : (t.group ?? 'control-plane') === group));
  const needsGo = selected.some((t) => t.binaries.some(([b]) => !(assets && existsSync(join(assets, b))) && !existsSync(join(dir, b))));
  let goVersion = null;
  const goAvailable = spawnSync('go', ['version'], { env: goEnv() }).status === 0;
  if (needsGo || goAvailable) goVersion = checkGo();
  for (const tool of selected) await ensure(tool, dir, goVersion, assets);
  log(`${title} ready in ${elapsed(t0)}`);
}

main().catch((e) => fail(e.stack || String(e)));
