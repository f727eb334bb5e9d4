import {
  e2eModes,
  helmInstall,
  helmTest,
  leftovers,
  operatorIdentities,
  operatorPods,
  changesAcrossRestart,
  runInCluster,
  startE2ECluster,
  waitFor,
  workspaceApp,
  workspaceRoot,
  type E2ECluster,
  type Release,
} from '@opkit/testing';
import { appImageNotices } from '@opkit/testing/containers';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const app = workspaceApp('cdn-operator');
const samples = parseAllDocuments(readFileSync(join(workspaceRoot(), 'apps/cdn-operator/examples/cdnclusters.yaml'), 'utf8')).map(
  (d) => d.toJSON() as { metadata: { name: string } },
);
const sample = (name: string) => samples.find((s) => s.metadata.name === name)!;
const NS = 'edge';
const TRAFFIC = 'traffic';

/** An origin for the kind spec: nginx answering every request with its name, the URI and the client's address. */
const origin = (name: string, image: string) => {
  const conf = [
    'pid /tmp/nginx.pid;',
    'error_log stderr warn;',
    'events {}',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path /tmp/${t};`),
    `  server { listen 8080; default_type text/plain; location / { return 200 "origin=${name} uri=$request_uri from=$remote_addr\\n"; } }`,
    '}',
  ].join('\n');
  const labels = { app: `origin-${name}` };
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `origin-${name}` }, data: { 'nginx.conf': conf } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `origin-${name}` },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext: { runAsNonRoot: true, runAsUser: 101, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'nginx',
                image,
                command: ['nginx', '-c', '/etc/nginx/origin/nginx.conf', '-g', 'daemon off;'],
                ports: [{ containerPort: 8080 }],
                readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                volumeMounts: [
                  { name: 'conf', mountPath: '/etc/nginx/origin' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'conf', configMap: { name: `origin-${name}` } },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: `origin-${name}` }, spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] } },
  ];
};

/**
 * A client in the cluster: HTTP/1.0 GETs through the balancer's Service with bash's /dev/tcp (a
 * request is retried twice, half a second apart, if the connection fails, as any client would).
 * Prints `path|status|X-Cache-Status|first body line` per request.
 */
const httpClient = (requests: string) => `
get() {
  local host=balancer.${TRAFFIC}.svc.cluster.local resp=
  for try in 1 2 3; do
    # Bounded: a connection to a pod that just went away can hang until TCP gives up (minutes).
    # A refused connection (a pod going away) is retried, not reported: bash's complaint stays out of the output.
    resp=$(timeout 8 bash -c 'exec 3<>/dev/tcp/$0/80 || exit 1; printf "GET %s HTTP/1.0\\r\\nHost: cdn.example\\r\\n\\r\\n" "$1" >&3; cat <&3' "$host" "$1" 2>/dev/null | tr -d '\r')
    [ -n "$resp" ] && break
    sleep 0.5
  done
  local status=$(printf '%s\n' "$resp" | head -1 | awk '{print $2}')
  local cache=$(printf '%s\n' "$resp" | sed -n 's/^[Xx]-[Cc]ache-[Ss]tatus: //p' | head -1)
  local body=$(printf '%s\n' "$resp" | sed '1,/^$/d' | head -1)
  echo "$1|\${status:-none}|\${cache:--}|$body"
}
${requests}
`;

interface CdnCluster {
  status?: {
    state?: string;
    message?: string;
    upstreams?: { name: string; address?: string; ready: boolean }[];
    conditions?: { type: string; reason: string }[];
  };
}

for (const mode of e2eModes()) {
  describe.skipIf(!!mode.skip)(`cdn operator with helm, ${mode.name} mode${mode.skip ? ` (skipped: ${mode.skip})` : ''}`, () => {
    let cluster: E2ECluster;
    const r: Release = { release: 'cdn', namespace: 'cdn-system', app };
    const kubectl = (...args: string[]) => cluster.kubectl(args);
    // JSON, not YAML: kubectl reads YAML 1.1, where a cluster named `y` or `n` is a boolean. In kind
    // the clusters' pods run real nginx, from the image this machine can run.
    const apply = (ns: string, obj: object) => {
      const o = obj as { kind?: string; spec?: object };
      const withImage = o.kind === 'CdnCluster' && cluster.images.nginx ? { ...o, spec: { ...o.spec, image: cluster.images.nginx } } : o;
      return cluster.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(withImage) });
    };
    const get = async (name: string, ns = NS) => JSON.parse((await kubectl('get', `cdncluster/${name}`, '-n', ns, '-o', 'json')).stdout) as CdnCluster;
    const waitState = (name: string, state: string, ns = NS) =>
      waitFor(
        `${name} to be ${state}`,
        async () => {
          const c = await get(name, ns);
          return c.status?.state === state && c;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
    const cycle = (name: string, sources: string[]) => ({
      apiVersion: 'cdn.opkit.dev/v1',
      kind: 'CdnCluster',
      metadata: { name },
      spec: { role: 'cache', sources: sources.map((s) => ({ name: s })) },
    });

    beforeAll(async () => {
      cluster = await startE2ECluster(mode.name, { apps: [app], workloads: ['nginx', 'shell'] });
      await helmInstall(cluster, r);
      await kubectl('create', 'namespace', NS);
    });
    afterAll(() => cluster?.stop());

    it.runIf(mode.name === 'kind')("helm test: the chart's test Pod reads the operator's metrics through its Service", async () => {
      expect(await helmTest(cluster, r)).toMatch(/TEST SUITE:\s+cdn-cdn-operator-test-metrics[\s\S]*Phase:\s+Succeeded/);
    });

    it.runIf(mode.name === 'kind')("the image carries opkit's licence, the licence texts of the npm packages bundled in it, and Node's licence", async () => {
      const license = readFileSync(join(workspaceRoot(), 'LICENSE'), 'utf8');
      const appNotices = await appImageNotices(`${app.image.repository}:${app.image.tag}`);
      expect(appNotices.license).toBe(license);
      expect(appNotices.node).toMatch(/^Node\.js is licensed for use as follows/);
      expect(appNotices.thirdParty).toMatch(/^ {2}pino@\S+ {2}MIT$/m);
    });

    it('the three sample clusters applied in the wrong order all end Running, the balancer routing to both caches', async () => {
      await apply(NS, sample('balancer'));
      const waiting = await waitState('balancer', 'WaitingSource');
      expect(waiting.status?.message).toBe('waiting for sources (not found: cache-live, cache-vod)');
      await apply(NS, sample('cache-vod'));
      await apply(NS, sample('cache-live'));
      for (const name of ['cache-live', 'cache-vod', 'balancer']) await waitState(name, 'Running');
      const b = await get('balancer');
      expect(b.status?.upstreams?.map((u) => [u.name, u.ready])).toEqual([
        ['cache-live', true],
        ['cache-vod', true],
      ]);
      const conf = JSON.parse((await kubectl('get', 'configmap/balancer-nginx', '-n', NS, '-o', 'json')).stdout) as { data: Record<string, string> };
      expect(conf.data['nginx.conf']).toMatch(/location ~ "\^\/live\/" \{\n\s+proxy_pass http:\/\/src_cache_live;/);
      const who = operatorIdentities(cluster, 'cdn-operator');
      if (who) expect(who).toEqual(['system:serviceaccount:cdn-system:cdn-cdn-operator']);
      const cols = await kubectl('get', 'cdn', '-n', NS, '--no-headers', '--sort-by=.metadata.name');
      expect(
        cols.stdout
          .trim()
          .split('\n')
          .map((l) => l.split(/\s+/).slice(0, 3)),
      ).toEqual([
        ['balancer', 'balancer', 'Running'],
        ['cache-live', 'cache', 'Running'],
        ['cache-vod', 'cache', 'Running'],
      ]);
    });

    it('re-reconciles dependents: a source deleted makes the balancer Degraded, its return makes it Running', async () => {
      await kubectl('delete', 'cdncluster/cache-vod', '-n', NS);
      const degraded = await waitState('balancer', 'Degraded');
      expect(degraded.status?.message).toBe('lost source(s): cache-vod; their routes answer 503 until they return');
      await apply(NS, sample('cache-vod'));
      await waitState('balancer', 'Running');
    });

    it('names a dependency cycle and deploys nothing for it; breaking it releases its members', async () => {
      const ns = 'cycles';
      await kubectl('create', 'namespace', ns);
      await apply(ns, cycle('a', ['b']));
      await apply(ns, cycle('b', ['a']));
      expect((await waitState('a', 'Error', ns)).status?.message).toBe('dependency cycle: a → b → a');
      expect((await get('a', ns)).status?.conditions?.find((c) => c.type === 'SourcesReady')?.reason).toBe('DependencyCycle');
      expect(JSON.parse((await kubectl('get', 'deployments', '-n', ns, '-o', 'json')).stdout).items).toEqual([]);
      await apply(ns, { ...cycle('b', []), spec: { role: 'cache', origin: 'http://origin.example.com' } });
      await waitState('b', 'Running', ns);
      await waitState('a', 'Running', ns);
    });

    it.runIf(mode.name === 'kind')(
      'real nginx serves the routes: each path reaches its cache and the cache its origin; a source change re-routes traffic; pod restarts keep it serving',
      async () => {
        await kubectl('create', 'namespace', TRAFFIC);
        try {
          await realTraffic();
        } finally {
          await kubectl('delete', 'cdnclusters', '--all', '-n', TRAFFIC, '--wait=true', '--timeout=60s');
          await kubectl('delete', 'namespace', TRAFFIC, '--wait=true', '--timeout=120s');
        }
      },
    );

    async function realTraffic() {
      for (const o of [...origin('live', cluster.images.nginx!), ...origin('vod', cluster.images.nginx!)]) await apply(TRAFFIC, o);
      const cdn = (name: string, spec: object) => ({ apiVersion: 'cdn.opkit.dev/v1', kind: 'CdnCluster', metadata: { name }, spec });
      // Origins by their cluster DNS names: the caches resolve them per request.
      await apply(TRAFFIC, cdn('cache-live', { role: 'cache', replicas: 1, origin: `http://origin-live.${TRAFFIC}.svc.cluster.local` }));
      await apply(TRAFFIC, cdn('cache-vod', { role: 'cache', replicas: 1, origin: `http://origin-vod.${TRAFFIC}.svc.cluster.local` }));
      const balancer = (live: string) =>
        cdn('balancer', {
          role: 'balancer',
          replicas: 2,
          sources: [
            { name: 'cache-live', pathCondition: live },
            { name: 'cache-vod', pathCondition: '^/vod/' },
          ],
        });
      await apply(TRAFFIC, balancer('^/live/'));
      for (const name of ['cache-live', 'cache-vod', 'balancer']) await waitState(name, 'Running', TRAFFIC);
      // The origins are the test's own, not the operator's: wait for them as a user would, or a
      // cache's first request can reach an origin that is not serving yet (a 502 CI once saw).
      for (const name of ['origin-live', 'origin-vod']) await kubectl('rollout', 'status', `deployment/${name}`, '-n', TRAFFIC, '--timeout=120s');
      const originsUp = await runInCluster(cluster, {
        namespace: TRAFFIC,
        script: `for i in $(seq 1 60); do ok=0; for o in origin-live origin-vod; do timeout 3 bash -c "exec 3<>/dev/tcp/$o.${TRAFFIC}.svc.cluster.local/80" 2>/dev/null && ok=$((ok+1)); done; [ $ok = 2 ] && exit 0; sleep 1; done; exit 1`,
      });
      expect(originsUp.exitCode, 'the origins answer through their Services').toBe(0);
      const podIPs = async (instance: string) =>
        (await kubectl('get', 'pods', '-n', TRAFFIC, '-l', `app.kubernetes.io/instance=${instance}`, '-o', 'jsonpath={.items[*].status.podIP}')).stdout
          .split(' ')
          .filter(Boolean);
      const requests = async (script: string) =>
        (await runInCluster(cluster, { namespace: TRAFFIC, script: httpClient(script) })).output
          .trim()
          .split('\n')
          .map((l) => l.split('|'));

      const [liveMiss = [], liveHit = [], vod = [], other = []] = await requests('get /live/a.m3u8; get /live/a.m3u8; get /vod/b.mp4; get /other');
      const [liveIPs, vodIPs] = [await podIPs('cache-live'), await podIPs('cache-vod')];
      // /live/ through cache-live to the live origin; again, from the cache.
      expect(liveMiss.slice(0, 3)).toEqual(['/live/a.m3u8', '200', 'MISS']);
      expect(liveMiss[3]).toMatch(/^origin=live uri=\/live\/a\.m3u8 from=(\S+)$/);
      expect(liveIPs).toContain(liveMiss[3]?.split('from=')[1]);
      expect(liveHit.slice(0, 3)).toEqual(['/live/a.m3u8', '200', 'HIT']);
      expect(vod.slice(0, 3)).toEqual(['/vod/b.mp4', '200', 'MISS']);
      expect(vodIPs).toContain(vod[3]?.split('from=')[1]);
      expect(other).toEqual(['/other', '404', '-', 'no route for this path']);

      // A source's route changes: the balancer rolls out the new configuration, and traffic follows.
      await apply(TRAFFIC, balancer('^/sport/'));
      await waitFor(
        '/sport/ routed to cache-live, /live/ no longer',
        async () => {
          const [sport = [], live = []] = await requests('get /sport/final.ts; get /live/a.m3u8');
          return sport[1] === '200' && !!sport[3]?.startsWith('origin=live uri=/sport/final.ts') && live[1] === '404';
        },
        { timeoutMs: 120_000, intervalMs: 1_000 },
      );
      await waitState('balancer', 'Running', TRAFFIC);

      // A balancer pod restarts while requests flow: the other replica serves every one of them.
      const during = runInCluster(cluster, { namespace: TRAFFIC, script: httpClient('for i in $(seq 1 30); do get /vod/clip-$i.mp4; sleep 0.3; done') });
      await new Promise((r) => setTimeout(r, 3_000));
      await kubectl(
        'delete',
        'pod',
        '-n',
        TRAFFIC,
        '-l',
        'app.kubernetes.io/instance=balancer',
        '--field-selector',
        `status.podIP=${(await podIPs('balancer'))[0]}`,
        '--wait=false',
      );
      const answers = (await during).output
        .trim()
        .split('\n')
        .map((l) => l.split('|'));
      expect(answers).toHaveLength(30);
      expect(answers.filter((a) => a[1] !== '200')).toEqual([]);
      // The cache's only pod restarts: its replacement serves again, from the origin (its cache was in its pod).
      await kubectl('delete', 'pod', '-n', TRAFFIC, '-l', 'app.kubernetes.io/instance=cache-vod', '--wait=true');
      await waitState('balancer', 'Running', TRAFFIC);
      await waitFor(
        'cache-vod serving again',
        async () => {
          const [a = []] = await requests('get /vod/after-restart.mp4');
          return a[1] === '200' && !!a[3]?.startsWith('origin=vod') && (await podIPs('cache-vod')).includes(a[3].split('from=')[1] ?? '');
        },
        { timeoutMs: 120_000, intervalMs: 1_000 },
      );
    }

    it('a restarted operator does not redo finished work', async () => {
      const kinds = ['cdnclusters', 'deployments', 'services', 'configmaps'];
      expect(await changesAcrossRestart(cluster, r, kinds, [NS, 'cycles'])).toEqual([]);
    });

    it('helm upgrade with changed values (one namespace watched) rolls the operator, which keeps working there', async () => {
      await helmInstall(cluster, r, { watchNamespaces: [NS], logLevel: 'debug' });
      const pod = (await operatorPods(cluster, r))[0]!;
      expect(pod.args).toContain('--log-level=debug');
      // Namespaced RBAC now: a Role in the watched namespace, no cluster-wide grant of CdnClusters.
      expect((await kubectl('get', 'roles', '-n', NS, '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'name')).stdout.trim()).not.toBe('');
      await apply(NS, { ...sample('cache-vod'), spec: { ...(sample('cache-vod') as unknown as { spec: object }).spec, replicas: 2 } });
      await waitFor(
        "the balancer to follow cache-vod's new capacity",
        async () => {
          const conf = JSON.parse((await kubectl('get', 'configmap/balancer-nginx', '-n', NS, '-o', 'json')).stdout) as { data: Record<string, string> };
          return !!conf.data['nginx.conf']?.includes('max_conns=1024;') && (await get('balancer')).status?.state === 'Running';
        },
        { timeoutMs: 60_000 },
      );
    });

    it('helm uninstall, after the CdnClusters are deleted, leaves nothing the operator made; the CRD is kept', async () => {
      // The operator now watches only NS: remove the other namespace's clusters while it can't
      // (no finalizers, so garbage collection alone cleans up after them).
      for (const ns of [NS, 'cycles']) await kubectl('delete', 'cdnclusters', '--all', '-n', ns, '--wait=true', '--timeout=60s');
      await cluster.helm(['uninstall', r.release, '--namespace', r.namespace, '--wait']);
      await waitFor('the operator pods gone', async () => (await operatorPods(cluster, r)).length === 0, { timeoutMs: 60_000 });
      await kubectl('get', 'crd', 'cdnclusters.cdn.opkit.dev');
      // Owned Deployments, Services and ConfigMaps go by garbage collection.
      await waitFor(
        'nothing left',
        async () => (await leftovers(cluster, 'cdn-operator', ['deployments', 'services', 'configmaps', 'secrets', 'leases', 'cdnclusters'])).length === 0,
        { timeoutMs: 90_000 },
      );
      expect(
        (await cluster.kubectl(['get', 'clusterroles,clusterrolebindings', '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'name'])).stdout.trim(),
      ).toBe('');
    });
  });
}
