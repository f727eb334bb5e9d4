import {
  e2eModes,
  helmInstall,
  vendorChartDependencies,
  helmTest,
  leftovers,
  publishChart,
  verifySignedChart,
  type ReleaseManifest,
  operatorIdentities,
  operatorPods,
  killOperatorPod,
  changesAcrossRestart,
  restartOperator,
  runInCluster,
  startE2ECluster,
  waitFor,
  workspaceApp,
  workspaceRoot,
  type E2ECluster,
  type Release,
  replicaOf,
} from '@opkit/testing';
import {
  appImageNotices,
  buildBundleImage,
  imageFiles,
  pushImage,
  signArtifact,
  SignatureError,
  tagManifest,
  verifiedSbom,
  verifySignature,
} from '@opkit/testing/containers';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSIGNMENT_ANNOTATION, parseAssignment, shardHash } from '@opkit/runtime';
import { writesOutsideShards } from '@opkit/runtime/testing/faults';
import { parse } from 'yaml';

const app = workspaceApp('memcached-operator');
const sampleYaml = parse(readFileSync(join(workspaceRoot(), 'apps/memcached-operator/examples/memcached.yaml'), 'utf8')) as {
  metadata: { name: string };
  spec: Record<string, unknown>;
};
const NS = 'cache';
/** Where the Memcacheds from before the conversion live. */
const OLD = 'before-conversion';

/**
 * A client in the cluster, speaking memcached's text protocol with bash's /dev/tcp: through the
 * Service's name it stores a key and reads it back on one connection, then asks every address the
 * Service resolves to for its version. Prints `roundtrip <value>` and one `server <ip>` per answer.
 */
const memcachedClient = (service: string, key: string, value: string) => `
set -u
host=${service}.${NS}.svc.cluster.local
# Each connection bounded: one to a pod that just went away can hang until TCP gives up.
ask() { timeout 5 bash -c 'exec 3<>/dev/tcp/$0/11211 || exit 1; printf "$1" >&3; cat <&3' "$1" "$2" | tr -d '\r'; }
reply=$(ask $host 'set ${key} 0 0 ${value.length}\r\n${value}\r\nget ${key}\r\nquit\r\n')
echo "$reply" | grep -q '^STORED$' && echo "roundtrip $(echo "$reply" | sed -n '/^VALUE/{n;p}')"
for ip in $(getent ahostsv4 $host | awk '{print $1}' | sort -u); do
  ask $ip 'version\r\nquit\r\n' | grep -q '^VERSION ' && echo "server $ip"
done
`;

const isJsonObject = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

interface Memcached {
  spec: { replicas: number };
  status?: { phase?: string; readyReplicas?: number; nodes?: string[] };
}

for (const mode of e2eModes()) {
  describe.skipIf(!!mode.skip)(`memcached operator with helm, ${mode.name} mode${mode.skip ? ` (skipped: ${mode.skip})` : ''}`, () => {
    let cluster: E2ECluster;
    const r: Release = { release: 'memcached', namespace: 'memcached-system', app };
    // In kind the pods are real memcached servers, from the image this machine can run.
    const memcached = (name: string, spec: Record<string, unknown>) =>
      JSON.stringify({
        ...sampleYaml,
        metadata: { name },
        spec: { ...sampleYaml.spec, ...spec, ...(cluster.images.memcached ? { image: cluster.images.memcached } : {}) },
      });
    const sample = () => memcached(sampleYaml.metadata.name, {});
    const kubectl = (...args: string[]) => cluster.kubectl(args);
    const get = async <T>(what: string, ns = NS) => JSON.parse((await kubectl('get', what, '-n', ns, '-o', 'json')).stdout) as T;
    const waitPhase = (name: string, phase: string, ready: number, ns = NS, timeoutMs = 120_000) =>
      waitFor(
        `Memcached ${ns}/${name} ${phase} with ${ready} ready`,
        async () => {
          const mc = await get<Memcached>(`memcached/${name}`, ns);
          return mc.status?.phase === phase && mc.status.readyReplicas === ready && mc;
        },
        { timeoutMs, intervalMs: 500 },
      );
    const CRD = 'memcacheds.cache.opkit.dev';
    type Crd = {
      metadata: Record<string, any>;
      spec: { versions: { name: string; storage: boolean }[]; conversion?: unknown };
      status?: { storedVersions?: string[] };
    };
    const storedVersions = async () => ((await get<Crd>(`crd/${CRD}`, 'default')).status?.storedVersions ?? []).sort();
    /** A Memcached written through v1alpha1 (as a manifest from before v1beta1 is). */
    const legacy = (name: string, size: number) =>
      JSON.stringify({
        apiVersion: 'cache.opkit.dev/v1alpha1',
        kind: 'Memcached',
        metadata: { name, namespace: OLD },
        spec: { size, ...(cluster.images.memcached ? { image: cluster.images.memcached } : {}) },
      });

    beforeAll(async () => {
      cluster = await startE2ECluster(mode.name, { apps: [app], workloads: ['memcached', 'shell'] });
    });
    afterAll(() => cluster?.stop());

    it('starts from the API as a chart without conversion left it: v1alpha1 alone, with a Memcached stored in it', async () => {
      // The chart's CRD as it was before v1beta1: its v1alpha1 version alone, stored, and no
      // conversion webhook. Owned by the release, so that the install below upgrades it, as a
      // `helm upgrade` from that chart would.
      await vendorChartDependencies(r.app.chart!);
      const rendered = await cluster.helm([
        'template',
        r.release,
        r.app.chart!,
        '--namespace',
        r.namespace,
        '--show-only',
        `templates/crds/cache.opkit.dev_memcacheds.yaml`,
      ]);
      const crd = parse(rendered.stdout) as Crd;
      crd.spec.versions = crd.spec.versions
        .filter((v) => v.name === 'v1alpha1')
        .map(({ deprecated: _d, deprecationWarning: _w, ...v }: Record<string, any>) => ({ ...v, storage: true })) as Crd['spec']['versions'];
      delete crd.spec.conversion;
      crd.metadata.annotations = { ...crd.metadata.annotations, 'meta.helm.sh/release-name': r.release, 'meta.helm.sh/release-namespace': r.namespace };
      crd.metadata.labels = { ...crd.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' };
      await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(crd) });
      await kubectl('wait', '--for=condition=Established', `crd/${CRD}`, '--timeout=60s');
      await kubectl('create', 'namespace', OLD);
      await waitFor(
        'a v1alpha1 Memcached stored',
        () =>
          cluster.kubectl(['apply', '-f', '-'], { input: legacy('old', 1) }).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 30_000 },
      );
      expect(await storedVersions()).toEqual(['v1alpha1']);
    });

    it('installs with helm: the CRD, the operator ready, holding its leader Lease', async () => {
      await helmInstall(cluster, r);
      await kubectl('get', 'crd', 'memcacheds.cache.opkit.dev');
      const pod = (await operatorPods(cluster, r))[0]!;
      const lease = await waitFor('the leader Lease held', async () => {
        const l = await get<{ spec: { holderIdentity?: string } }>('lease/memcached-operator-leader', r.namespace);
        return !!l.spec.holderIdentity && l;
      });
      expect(lease.spec.holderIdentity).toMatch(new RegExp(`^${pod.name}_`));
      // It acts as the chart's ServiceAccount, so the chart's RBAC is all it has.
      const who = operatorIdentities(cluster, 'memcached-operator');
      if (who) expect(who).toEqual(['system:serviceaccount:memcached-system:memcached-memcached-operator']);
    });

    it('upgraded to conversion with one replica and objects stored as v1alpha1: it becomes ready, runs them, and migrates their storage', async () => {
      // Listing Memcacheds as v1beta1 calls this operator's own conversion webhook through its
      // Service, which routes only to ready pods: the pod must be ready before its caches sync.
      await waitPhase('old', 'Available', 1, OLD, 60_000);
      await waitFor('storedVersions trimmed to v1beta1', async () => (await storedVersions()).join() === 'v1beta1', { timeoutMs: 60_000 });
    });

    it('restarts its one replica while a Memcached is still stored as v1alpha1: the new pod is ready and reconciles within a minute', async () => {
      // A Memcached an older operator converged stays stored as v1alpha1: the new one finds nothing
      // to write on it. Made so here by writing it while v1alpha1 is the storage version.
      const setStorage = async (version: string) => {
        const crd = await get<Crd>(`crd/${CRD}`, 'default');
        crd.spec.versions = crd.spec.versions.map((v) => ({ ...v, storage: v.name === version }));
        await cluster.kubectl(['replace', '-f', '-'], { input: JSON.stringify(crd) });
      };
      await setStorage('v1alpha1');
      await cluster.kubectl(['apply', '-f', '-'], { input: legacy('kept', 1) });
      await waitPhase('kept', 'Available', 1, OLD);
      await new Promise((res) => setTimeout(res, 3_000)); // its last status write lands, as v1alpha1
      await setStorage('v1beta1');
      expect(await storedVersions()).toEqual(['v1alpha1', 'v1beta1']);

      const restarted = performance.now();
      await restartOperator(cluster, r);
      const readyAfter = performance.now() - restarted;
      // One replica: between the old pod's end and kube-proxy routing to the new one, the webhook
      // Service has no endpoint, and a call through it fails; a user's retry succeeds.
      await waitFor(
        'the scale accepted',
        () =>
          cluster.kubectl(['scale', 'memcached/kept', '-n', OLD, '--replicas=2']).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      const scaled = performance.now();
      await waitFor(
        'the Deployment scaled by the new pod',
        async () => (await get<{ spec: { replicas: number } }>('deployment/kept', OLD)).spec.replicas === 2,
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      console.log(
        `the new pod was ready ${Math.round(readyAfter)} ms after the old one was deleted, and reconciled a change ${Math.round(performance.now() - scaled)} ms after it was made`,
      );
      expect(readyAfter).toBeLessThan(60_000);
      await waitFor('storedVersions trimmed to v1beta1 again', async () => (await storedVersions()).join() === 'v1beta1', { timeoutMs: 60_000 });
      await kubectl('delete', 'memcacheds', '--all', '-n', OLD, '--cascade=foreground', '--wait=true', '--timeout=120s');
      await kubectl('delete', 'namespace', OLD, '--wait=true', '--timeout=60s');
    });

    it.runIf(mode.name === 'kind')("helm test: the chart's test Pod reads the operator's metrics through its Service", async () => {
      expect(await helmTest(cluster, r)).toMatch(/TEST SUITE:\s+memcached-memcached-operator-test-metrics[\s\S]*Phase:\s+Succeeded/);
    });

    it.runIf(mode.name === 'kind')("the operator's container has no shell and no package manager, and runs as non-root on a read-only root", async () => {
      const pod = (await operatorPods(cluster, r))[0]!;
      const exec = (...cmd: string[]) => cluster.kubectl(['exec', '-n', r.namespace, pod.name, '--', ...cmd], { check: false });
      // An attacker's first step, and a debugging habit: neither finds a shell.
      const sh = await exec('/bin/sh', '-c', 'true');
      expect(sh.code).not.toBe(0);
      expect(sh.stderr).toMatch(/no such file or directory|executable file not found/);
      // The only program in the image is node: ask it what the container holds and allows.
      const probe = await exec(
        '/nodejs/bin/node',
        '-e',
        `
        const fs = require('node:fs');
        const found = ['/bin/sh', '/bin/bash', '/usr/bin/sh', '/bin/busybox', '/usr/bin/apt-get', '/usr/bin/apt', '/usr/bin/dpkg', '/sbin/apk', '/usr/bin/npm', '/nodejs/bin/npm']
          .filter((p) => fs.existsSync(p));
        let write = 'ok';
        try { fs.writeFileSync('/app/x', 'x'); } catch (e) { write = e.code; }
        console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), found, write }));`,
      );
      expect(probe.stderr).toBe('');
      expect(JSON.parse(probe.stdout)).toEqual({ uid: 65532, gid: 65532, found: [], write: 'EROFS' });
    });

    it.runIf(mode.name === 'kind')(
      "the image carries opkit's licence, the licence texts of the npm packages bundled in it and Node's licence, and says its source, revision and licence in OCI labels",
      async () => {
        const license = readFileSync(join(workspaceRoot(), 'LICENSE'), 'utf8');
        const appNotices = await appImageNotices(`${app.image.repository}:${app.image.tag}`);
        expect(appNotices.license).toBe(license);
        expect(appNotices.node).toMatch(/^Node\.js is licensed for use as follows/);
        expect(appNotices.thirdParty).toMatch(/^ {2}pino@\S+ {2}MIT$/m);
        // The labels a registry and a scanner read: the same in every app's image (one Dockerfile).
        const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: workspaceRoot(), encoding: 'utf8' });
        const head = git.status === 0 ? git.stdout.trim() : 'unknown'; // a source tree without git history
        expect(appNotices.labels).toMatchObject({
          'org.opencontainers.image.licenses': 'Apache-2.0',
          'org.opencontainers.image.source': 'https://github.com/opkit/opkit',
          'org.opencontainers.image.version': app.image.tag, // the app's package.json version
          'org.opencontainers.image.revision': expect.stringMatching(new RegExp(`^${head}(-dirty)?$`)),
          // The base it runs on, by digest: an official base as its registry serves it, or one built
          // here as the release published it beside its images (under <path>/base/).
          'org.opencontainers.image.base.name': expect.stringMatching(
            /^(localhost:\d+\/opkit\/base\/node-runtime|gcr\.io\/distroless\/nodejs24-debian12(:\S+)?)@sha256:[0-9a-f]{64}$/,
          ),
        });
      },
    );

    it.runIf(mode.name === 'kind')(
      'installs as a user would: the chart from the OCI registry, the image pinned by digest and pulled by the node from that registry',
      async () => {
        const image = cluster.published!.images.find((i) => i.repository === app.image.repository)!;
        const chart = cluster.published!.charts.find((c) => c.name === 'memcached-operator')!;
        expect(image.ref).toMatch(/^localhost:\d+\/opkit\/memcached-operator@sha256:[0-9a-f]{64}$/);
        expect(chart.ref).toMatch(/^oci:\/\/localhost:\d+\/opkit\/charts\/memcached-operator$/);
        expect(chart.pins).toEqual([{ path: ['image'], ref: image.ref }]);
        // The release's values are the published chart's: the digest written in at publishing.
        const values = JSON.parse((await cluster.helm(['get', 'values', r.release, '--namespace', r.namespace, '--all', '--output', 'json'])).stdout) as {
          image: { digest: string; registry: string };
        };
        expect(values.image).toMatchObject({ digest: image.digest, registry: image.registry });
        const pods = JSON.parse((await kubectl('get', 'pods', '-n', r.namespace, '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'json')).stdout) as {
          items: { spec: { containers: { image: string }[] }; status: { containerStatuses: { imageID: string }[] } }[];
        };
        expect(pods.items.length).toBeGreaterThan(0);
        for (const pod of pods.items) {
          expect(pod.spec.containers[0]!.image).toBe(image.ref);
          // containerd names an image by the registry it pulled it from: a `kind load`ed one would be docker.io/…
          expect(pod.status.containerStatuses[0]!.imageID).toBe(image.ref);
        }
      },
    );

    it.runIf(mode.name === 'kind')(
      'the image carries a signed SBOM (SPDX) that names what it ships: the base’s Debian packages, Node, and every npm package bundled into main.js',
      async () => {
        const { key, signing, images } = cluster.published!;
        const image = images.find((i) => i.repository === app.image.repository)!;
        const sbom = (await verifiedSbom(image.ref, key.publicKey, signing)) as { spdxVersion: string; packages: { name: string; versionInfo?: string }[] };
        expect(sbom.spdxVersion).toBe('SPDX-2.3');
        const found = sbom.packages.map((p) => `${p.name}@${p.versionInfo}`);
        // libjemalloc2: the allocator apps/Dockerfile adds and preloads, a native library scanners must see.
        expect(found).toEqual(
          expect.arrayContaining([expect.stringMatching(/^node@24\./), expect.stringMatching(/^libc6@/), expect.stringMatching(/^libjemalloc2@/)]),
        );
        // The notices list every bundled package (`  name@version  licence`); the SBOM must too.
        const bundled = [...(await appImageNotices(`${app.image.repository}:${app.image.tag}`)).thirdParty.matchAll(/^ {2}(\S+@\S+) {2}\S/gm)].map(
          (m) => m[1]!,
        );
        expect(bundled).toEqual(expect.arrayContaining([expect.stringMatching(/^pino@/)]));
        expect(found).toEqual(expect.arrayContaining(bundled));
      },
    );

    it.runIf(mode.name === 'kind')(
      'refuses a tampered release, installing nothing: a chart re-pushed under the same version, or one signed but pointing at an image the key never signed',
      async () => {
        const pub = cluster.published!;
        const chart = pub.charts.find((c) => c.name === 'memcached-operator')!;
        const original = pub.images.find((i) => i.repository === app.image.repository)!;
        const repository = chart.ref.slice('oci://'.length);
        // An attacker's image under the operator's repository and tag: any image the key never signed.
        const evil = await pushImage(cluster.images.shell!, pub.registry, app.image.repository, app.image.tag);
        const t: Release = { release: 'tampered', namespace: 'tampered', app };
        try {
          const forged = await publishChart(app.chart!, [evil], { target: repository.slice(0, repository.lastIndexOf('/')), plainHttp: true });
          expect(forged.version).toBe(chart.version);
          const unsigned = await helmInstall(cluster, t).catch((e: unknown) => e);
          expect(unsigned).toBeInstanceOf(SignatureError);
          expect((unsigned as SignatureError).ref).toBe(`${repository}@${forged.digest}`);
          // Signed after all (a chart-signing step gone wrong): its image is still checked, and refused.
          await signArtifact(`${repository}@${forged.digest}`, pub.key, pub.signing);
          const unsignedImage = await helmInstall(cluster, t).catch((e: unknown) => e);
          expect(unsignedImage).toBeInstanceOf(SignatureError);
          expect((unsignedImage as SignatureError).ref).toBe(evil.ref);
          expect(JSON.parse((await cluster.helm(['list', '--namespace', t.namespace, '--output', 'json'])).stdout)).toEqual([]);
        } finally {
          await tagManifest(pub.registry, repository.slice(pub.registry.length + 1), chart.digest, chart.version);
          await tagManifest(pub.registry, app.image.repository, original.digest, app.image.tag);
        }
        await expect(cluster.chartSource!(app)).resolves.toEqual({ chart: `${chart.ref}@${chart.digest}`, args: ['--plain-http'] });
        // A validly signed chart under another version's tag (an old release swapped in) is refused too.
        await tagManifest(pub.registry, repository.slice(pub.registry.length + 1), chart.digest, '9.9.9');
        await expect(verifySignedChart({ repository, version: '9.9.9', publicKey: pub.key.publicKey, ...pub.signing })).rejects.toThrow(
          `is memcached-operator:${chart.version}, signed, but not the memcached-operator:9.9.9 asked for`,
        );
      },
    );

    it('serves v1alpha1 through its conversion webhook: an old manifest applies, reads back as v1beta1, and the CRD trusts the CA the operator keeps', async () => {
      await kubectl('create', 'namespace', 'legacy');
      const old = { apiVersion: 'cache.opkit.dev/v1alpha1', kind: 'Memcached', metadata: { name: 'old', namespace: 'legacy' }, spec: { size: 0 } };
      // The API server calls the webhook (kind: through its Service; local: the operator's process) once the CA is injected.
      await waitFor(
        'a v1alpha1 Memcached accepted',
        () =>
          cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(old) }).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 60_000 },
      );
      const beta = await get<{ apiVersion: string; spec: { replicas: number } }>('memcacheds.v1beta1.cache.opkit.dev/old', 'legacy');
      expect(beta).toMatchObject({ apiVersion: 'cache.opkit.dev/v1beta1', spec: { replicas: 0 } });
      const alpha = await get<{ spec: { size: number } }>('memcacheds.v1alpha1.cache.opkit.dev/old', 'legacy');
      expect(alpha.spec.size).toBe(0);
      const crd = await get<{ spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } } }>('crd/memcacheds.cache.opkit.dev', 'default');
      const secret = await get<{ data: Record<string, string> }>('secret/memcached-memcached-operator-webhook-tls', r.namespace);
      expect(crd.spec.conversion.webhook.clientConfig.caBundle).toBe(secret.data['ca.crt']);
      await kubectl('delete', 'namespace', 'legacy', '--wait=true', '--timeout=60s');
    });

    it.runIf(mode.name === 'kind')(
      "the OLM bundle builds into an image with the containers tooling: the bundle's files, its annotations as labels",
      async () => {
        const ref = await buildBundleImage('memcached-operator');
        const labels = JSON.parse(execFileSync('docker', ['image', 'inspect', ref, '--format', '{{json .Config.Labels}}'], { encoding: 'utf8' })) as Record<
          string,
          string
        >;
        const annotations = (
          parse(readFileSync(join(workspaceRoot(), 'apps/memcached-operator/bundle/metadata/annotations.yaml'), 'utf8')) as {
            annotations: Record<string, string>;
          }
        ).annotations;
        expect(labels).toMatchObject(annotations);
        const dir = mkdtempSync(join(tmpdir(), 'opkit-bundle-image-'));
        try {
          const id = execFileSync('docker', ['create', ref, 'none'], { encoding: 'utf8' }).trim();
          execFileSync('docker', ['cp', `${id}:/manifests`, dir]);
          execFileSync('docker', ['rm', id]);
          expect(readFileSync(join(dir, 'manifests/memcached-operator.clusterserviceversion.yaml'), 'utf8')).toBe(
            readFileSync(join(workspaceRoot(), 'apps/memcached-operator/bundle/manifests/memcached-operator.clusterserviceversion.yaml'), 'utf8'),
          );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );

    it('runs the sample: 3 pods, Available; scales to 1; deleting it removes what it made', async () => {
      await kubectl('create', 'namespace', NS);
      await cluster.kubectl(['apply', '-n', NS, '-f', '-'], { input: sample() });
      const mc = await waitPhase('memcached-sample', 'Available', 3);
      expect(mc.status?.nodes).toHaveLength(3);
      const dep = await get<{ spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } } }>('deployment/memcached-sample');
      expect(dep.spec.replicas).toBe(3);
      expect(dep.spec.template.spec.containers[0]?.args.join(' ')).toContain('-m 256');

      await kubectl('scale', 'memcached/memcached-sample', '-n', NS, '--replicas=1');
      await waitPhase('memcached-sample', 'Available', 1);
      expect((await get<{ spec: { replicas: number } }>('deployment/memcached-sample')).spec.replicas).toBe(1);

      await kubectl('delete', 'memcached/memcached-sample', '-n', NS, '--wait=true', '--timeout=60s');
      await waitFor('its Deployment and Service gone', async () => (await get<{ items: unknown[] }>('deployments,services')).items.length === 0, {
        timeoutMs: 60_000,
      });
    });

    it.runIf(mode.name === 'kind')(
      'the pods are real memcached servers: a client in the cluster stores and reads a key through the Service; scaling changes how many answer',
      async () => {
        await cluster.kubectl(['apply', '-n', NS, '-f', '-'], { input: memcached('live', { replicas: 2 }) });
        const servers = async (size: number) => {
          await waitPhase('live', 'Available', size);
          // The Service's DNS follows the pods' readiness: wait until it names exactly `size` servers that answer.
          return waitFor(
            `${size} memcached servers answering`,
            async () => {
              const run = await runInCluster(cluster, { namespace: NS, script: memcachedClient('live', 'greeting', 'hello-kind') });
              const answering = run.output.split('\n').filter((l) => l.startsWith('server '));
              return answering.length === size && run;
            },
            { timeoutMs: 120_000, intervalMs: 2_000 },
          );
        };
        const two = await servers(2);
        expect(two.output).toContain('roundtrip hello-kind');
        await kubectl('scale', 'memcached/live', '-n', NS, '--replicas=3');
        const three = await servers(3);
        expect(three.output).toContain('roundtrip hello-kind');
        await kubectl('scale', 'memcached/live', '-n', NS, '--replicas=1');
        const one = await servers(1);
        expect(one.output).toContain('roundtrip hello-kind');
        await kubectl('delete', 'memcached/live', '-n', NS, '--wait=true', '--timeout=60s');
      },
    );

    it("prints JSON lines only: the operator as `logger`, a reconcile's object as `namespace` and `name`, once each", async () => {
      const lines = await cluster.operatorOutput(r.namespace, r.release);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter((l) => !isJsonObject(l))).toEqual([]);
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed.every((l) => l.logger === 'memcached-operator' && typeof l.level === 'number' && typeof l.time === 'number')).toBe(true);
      const reconciles = lines.filter((l) => l.includes('"controller":"memcached"') && l.includes('"name":"memcached-sample"'));
      expect(reconciles.length).toBeGreaterThan(0);
      for (const l of reconciles) expect(l.match(/"name":/g)).toHaveLength(1);
    });

    it('a restarted operator does not redo finished work', async () => {
      await cluster.kubectl(['apply', '-n', NS, '-f', '-'], { input: sample() });
      await waitPhase('memcached-sample', 'Available', 3);
      expect(await changesAcrossRestart(cluster, r, ['memcacheds', 'deployments', 'services'], [NS])).toEqual([]);
    });

    it('helm upgrade with changed values rolls the operator, which keeps working', async () => {
      await helmInstall(cluster, r, {
        logLevel: 'debug',
        logLevelEncoding: 'string',
        logTimeEncoding: 'iso8601',
        resources: { requests: { cpu: '20m', memory: '100Mi' }, limits: { memory: '300Mi' } },
      });
      const pod = (await operatorPods(cluster, r))[0]!;
      expect(pod.args).toContain('--log-level=debug');
      await kubectl('scale', 'memcached/memcached-sample', '-n', NS, '--replicas=2');
      await waitPhase('memcached-sample', 'Available', 2);
      // The conventional form, asked for in values: level names and ISO 8601 times.
      const lines = (await cluster.operatorOutput(r.namespace, r.release)).map((l) => JSON.parse(l) as { level: unknown; time: unknown });
      expect(new Set(lines.map((l) => typeof l.level))).toEqual(new Set(['string']));
      expect(lines.some((l) => l.level === 'debug')).toBe(true);
      expect(lines.filter((l) => typeof l.time !== 'string' || new Date(l.time).toISOString() !== l.time)).toEqual([]);
    });

    it('runs as a shard ring: 2 replicas, then 3, one lost with its node; each Memcached runs on the replica the ring gives it, and the audit log shows no write outside the assignment of its moment', async () => {
      const ring = 'memcached-operator';
      const shardLease = async () =>
        get<{ metadata: { annotations?: Record<string, string> } }>(`lease/${ring}-shards`, r.namespace).then((l) =>
          parseAssignment(l.metadata.annotations?.[ASSIGNMENT_ANNOTATION]),
        );
      /** The identities of the ready operator pods (`<pod>_<uid>`) once the assignment gives each a part and nothing is pending. */
      const settledRing = (size: number) =>
        waitFor(
          `the assignment to split the space between ${size} replicas, nothing pending`,
          async () => {
            const pods = await operatorPods(cluster, r);
            const ids = pods.map((p) => `${p.name}_${p.uid}`).sort();
            const a = await shardLease().catch(() => undefined);
            if (!a || pods.length !== size || a.some((s) => s.next !== undefined)) return false;
            const owners = [...new Set(a.map((s) => s.owner))].sort();
            return JSON.stringify(owners) === JSON.stringify(ids) && ids;
          },
          { timeoutMs: 90_000, intervalMs: 500 },
        );
      // Real memcached pods in kind, on one node: fewer of them.
      const names = Array.from({ length: mode.name === 'kind' ? 6 : 12 }, (_, i) => `shard-${i}`);
      const all = (replicas: number) => Promise.all(names.map((n) => waitPhase(n, 'Available', replicas, NS, 120_000)));
      const since = new Date();

      await helmInstall(cluster, r, { leaderElection: { enabled: false }, sharding: { enabled: true }, replicaCount: 2 });
      expect((await operatorPods(cluster, r))[0]!.args).toEqual(expect.arrayContaining(['--shard', `--shard-ring=${ring}`]));
      await settledRing(2);
      await cluster.kubectl(['apply', '-n', NS, '-f', '-'], { input: names.map((n) => memcached(n, { replicas: 1 })).join('\n') });
      await all(1);

      await helmInstall(cluster, r, { leaderElection: { enabled: false }, sharding: { enabled: true }, replicaCount: 3 });
      const three = await settledRing(3);
      const ringOfThree = (await shardLease())!;
      for (const n of names) await kubectl('scale', `memcached/${n}`, '-n', NS, '--replicas=2');
      await all(2);

      // A node lost with a replica on it: nothing released; its part waits out its Lease (15 s).
      const lost = three[1]!.split('_')[0]!;
      await killOperatorPod(cluster, r.namespace, lost);
      for (const n of names) await kubectl('scale', `memcached/${n}`, '-n', NS, '--replicas=1');
      await all(1);
      const after = await settledRing(3);
      expect(after).not.toContain(three[1]);

      // The API server's record: each write to a Memcached (status and finalizer included), its
      // Deployment or its Service, by the replica the assignment committed before it named owner.
      const uids = new Map<string, string>(
        (await get<{ items: { metadata: { name: string; uid: string } }[] }>('memcacheds')).items.map((m) => [m.metadata.name, m.metadata.uid]),
      );
      const audited = await cluster.auditEvents?.();
      if (!audited) throw new Error(`the ${mode.name} cluster keeps no audit log (a kind cluster reused through KIND_CLUSTER does not)`);
      const events = audited.filter((e) => Date.parse(e.requestReceivedTimestamp) >= since.getTime());
      const outside = writesOutsideShards(events, {
        userAgent: `${ring}/opkit`,
        assignment: { namespace: r.namespace, name: `${ring}-shards` },
        placeOf: (e) => {
          const ref = e.objectRef;
          if (ref?.namespace !== NS || !['memcacheds', 'deployments', 'services'].includes(ref.resource ?? '')) return undefined;
          const uid = uids.get(ref.name ?? '');
          return uid === undefined ? undefined : shardHash(uid);
        },
      });
      expect(outside).toEqual([]);
      // Each of the ring of three that owned a Memcached wrote (its Deployment, scaled to 2); the
      // replacement of the lost one may have joined after the others had taken over.
      const owning = new Set(
        names.map((n) => {
          const point = shardHash(uids.get(n)!);
          return ringOfThree.find((slice) => slice.start <= point && point < slice.end)!.owner!;
        }),
      );
      expect([...owning].every((id) => three.includes(id))).toBe(true);
      const writers = new Set(
        events
          .filter((e) => e.objectRef?.resource === 'deployments' && e.objectRef.namespace === NS && e.userAgent?.startsWith(`${ring}/opkit (`))
          .map(replicaOf),
      );
      for (const id of owning) expect(writers).toContain(id);
      for (const n of names) await kubectl('delete', `memcached/${n}`, '-n', NS, '--wait=false');
    });

    it('helm uninstall, after the Memcacheds are deleted, leaves nothing the operator made; the CRD is kept', async () => {
      // Foreground: kubectl returns once what they owned is gone too. (Background, the garbage
      // collector could still be deleting it when the check below runs, as it was once under CI's load.)
      await kubectl('delete', 'memcacheds', '--all', '-n', NS, '--cascade=foreground', '--wait=true', '--timeout=120s');
      await cluster.helm(['uninstall', r.release, '--namespace', r.namespace, '--wait']);
      await waitFor('the operator pods gone', async () => (await operatorPods(cluster, r)).length === 0, { timeoutMs: 60_000 });
      await kubectl('get', 'crd', 'memcacheds.cache.opkit.dev');
      // A sharded replica's Lease goes with its pod, through the garbage collector: a moment after it.
      const left = () => leftovers(cluster, 'memcached-operator', ['deployments', 'services', 'configmaps', 'secrets', 'leases', 'memcacheds']);
      await waitFor('the garbage collector to remove what the pods owned', async () => (await left()).length === 0, { timeoutMs: 30_000 }).catch(
        () => undefined,
      );
      expect(await left()).toEqual([]);
      const release = await cluster.kubectl([
        'get',
        'serviceaccounts,roles,rolebindings,deployments,services',
        '-n',
        r.namespace,
        '-l',
        `app.kubernetes.io/instance=${r.release}`,
        '-o',
        'name',
      ]);
      expect(release.stdout.trim()).toBe('');
      expect(
        (await cluster.kubectl(['get', 'clusterroles,clusterrolebindings', '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'name'])).stdout.trim(),
      ).toBe('');
    });

    it.runIf(mode.name === 'kind')(
      'the release command publishes the four images (amd64 and arm64), three charts and three bundles to the registry, signed; the memcached chart from that release installs, verified with its public key, and runs the sample',
      async () => {
        const out = mkdtempSync(join(tmpdir(), 'opkit-release-'));
        try {
          const prefix = `${cluster.published!.registry}/e2e-release`;
          const cli = spawnSync(
            process.execPath,
            [
              join(workspaceRoot(), 'tools/build/run-ts.mjs'),
              'packages/testing/src/release/release-cli.ts',
              'publish',
              '--registry',
              prefix,
              '--plain-http',
              '--out',
              out,
            ],
            { cwd: workspaceRoot(), encoding: 'utf8', timeout: 20 * 60_000 },
          );
          expect(cli.status, `${cli.stdout}\n${cli.stderr}`).toBe(0);
          const manifest = JSON.parse(readFileSync(join(out, 'release.json'), 'utf8')) as ReleaseManifest;
          const version = app.image.tag;
          expect(manifest.images.map((i) => i.source).sort()).toEqual([
            'opkit/acme-solver',
            'opkit/cdn-operator',
            'opkit/cert-operator',
            'opkit/memcached-operator',
          ]);
          expect(manifest.charts.map((c) => `${c.name}:${c.version}`).sort()).toEqual(
            ['cdn-operator', 'cert-operator', 'memcached-operator'].map((c) => `${c}:${version}`),
          );
          expect(manifest.bundles.map((b) => b.ref.split('@')[0]).sort()).toEqual(
            ['cdn-operator', 'cert-operator', 'memcached-operator'].map((c) => `${prefix}/${c}-bundle`),
          );
          const home = join(out, 'verify');
          // Every chart verifies with the release's public key: its signature, and its images' (pinned to this release's).
          for (const c of manifest.charts) {
            const verified = await verifySignedChart({
              repository: c.ref.slice('oci://'.length),
              version: c.version,
              publicKey: manifest.publicKey,
              plainHttp: true,
              home,
            });
            expect(verified.digest).toBe(c.digest);
            expect(verified.images.every((i) => manifest.images.some((m) => m.ref === i))).toBe(true);
          }
          for (const b of manifest.bundles) await verifySignature(b.ref, manifest.publicKey, { plainHttp: true, home });
          // Every image for amd64 and arm64: an index the charts pin, each platform's image signed
          // with its own SBOM, and the arm64 one runs Node for arm64 (here under QEMU).
          for (const i of manifest.images) {
            expect(i.platforms?.map((p) => p.platform)).toEqual(['linux/amd64', 'linux/arm64']);
            await verifySignature(i.ref, manifest.publicKey, { plainHttp: true, home });
            for (const p of i.platforms!) await verifySignature(p.ref, manifest.publicKey, { plainHttp: true, home });
          }
          const operatorIndex = manifest.images.find((i) => i.source === app.image.repository)!;
          const arm64 = operatorIndex.platforms!.find((p) => p.platform === 'linux/arm64')!;
          const arm64Sbom = (await verifiedSbom(arm64.ref, manifest.publicKey, { plainHttp: true, home })) as {
            packages: { name: string; versionInfo?: string }[];
          };
          // The SBOM is the arm64 image's (syft names the image it scanned by digest and architecture), and names what it ships.
          expect(JSON.stringify(arm64Sbom)).toContain(`${arm64.ref.split('@')[1]!.replace(':', '%3A')}?arch=arm64`);
          expect(arm64Sbom.packages.map((p) => `${p.name}@${p.versionInfo}`)).toEqual(
            expect.arrayContaining([expect.stringMatching(/^node@24\./), expect.stringMatching(/^libc6@/), expect.stringMatching(/^libjemalloc2@/)]),
          );
          const ran = execFileSync(
            'docker',
            ['run', '--rm', '--platform', 'linux/arm64', '--entrypoint', '/nodejs/bin/node', arm64.ref, '-p', 'process.arch'],
            {
              encoding: 'utf8',
            },
          );
          expect(ran.trim()).toBe('arm64');
          // The bundle's CSV runs the operator by the digest the release pushed, and lists it as a related image.
          const bundle = manifest.bundles.find((b) => b.source === 'opkit/memcached-operator-bundle')!;
          const operatorRef = manifest.images.find((i) => i.source === app.image.repository)!.ref;
          const csv = parse(
            (await imageFiles(bundle.ref, ['/manifests/memcached-operator.clusterserviceversion.yaml']))[
              '/manifests/memcached-operator.clusterserviceversion.yaml'
            ]!,
          ) as { metadata: { annotations: Record<string, string> }; spec: { relatedImages: { image: string }[] } };
          expect(csv.metadata.annotations.containerImage).toBe(operatorRef);
          expect(csv.spec.relatedImages.map((i) => i.image)).toEqual([operatorRef]);

          // Installed from the release as a user would: verified, by digest, the node pulling from the registry.
          const chart = manifest.charts.find((c) => c.name === 'memcached-operator')!;
          const verified = await verifySignedChart({
            repository: chart.ref.slice('oci://'.length),
            version: chart.version,
            publicKey: manifest.publicKey,
            plainHttp: true,
            home,
          });
          await cluster.helm(['install', r.release, verified.ref, '--plain-http', '--namespace', r.namespace, '--wait', '--timeout', '180s']);
          await cluster.waitOperatorReady(r.namespace, r.release);
          const pod = JSON.parse((await kubectl('get', 'pods', '-n', r.namespace, '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'json')).stdout) as {
            items: { status: { containerStatuses: { imageID: string }[] } }[];
          };
          expect(pod.items[0]!.status.containerStatuses[0]!.imageID).toBe(operatorRef);
          await cluster.kubectl(['apply', '-n', NS, '-f', '-'], { input: memcached('from-release', { replicas: 1 }) });
          await waitPhase('from-release', 'Available', 1);
          await kubectl('delete', 'memcached/from-release', '-n', NS, '--wait=true');
          await cluster.helm(['uninstall', r.release, '--namespace', r.namespace, '--wait']);
        } finally {
          rmSync(out, { recursive: true, force: true });
        }
      },
      // Four images built and pushed twice (amd64, arm64), their SBOMs made and attested.
      600_000,
    );
  });
}
