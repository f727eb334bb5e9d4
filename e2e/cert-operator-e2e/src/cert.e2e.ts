import {
  e2eModes,
  helmInstall,
  helmTest,
  leftovers,
  operatorIdentities,
  operatorPods,
  portForward,
  changesAcrossRestart,
  startE2ECluster,
  waitFor,
  workspaceApp,
  workspaceRoot,
  type E2ECluster,
  type Release,
} from '@opkit/testing';
import { appImageNotices } from '@opkit/testing/containers';
import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindAcme, localAcme, type AcmeEnv } from './acme-env.js';

const app = workspaceApp('cert-operator');
const solver = workspaceApp('acme-solver');
const caSample = readFileSync(join(workspaceRoot(), 'apps/cert-operator/examples/ca-issuer.yaml'), 'utf8');

/**
 * The suite runs once per API mode on one cluster: opkit's own groups, then cert-manager's
 * (`apiMode: cert-manager`, in place of cert-manager's controller). The groups are the operator's
 * (apps/cert-operator/src/api/groups.ts), written here as a user writes them; each pass has its own
 * namespace and ends uninstalled, its namespace deleted.
 */
const API_MODES = [
  { name: 'opkit', cert: 'cert.opkit.dev', acme: 'acme.cert.opkit.dev', values: {}, ns: 'shop' },
  { name: 'cert-manager', cert: 'cert-manager.io', acme: 'acme.cert-manager.io', values: { apiMode: 'cert-manager' }, ns: 'shop-cm' },
] as const;
const ACME_NAMES = ['shop.example.test', 'www.shop.example.test'];

interface Obj {
  metadata: { name: string; ownerReferences?: { kind: string; name: string }[] };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
  data?: Record<string, string>;
}
const pem = (s: Obj, k: string) => Buffer.from(s.data?.[k] ?? '', 'base64').toString();
const chainOf = (p: string) => p.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!.map((c) => new X509Certificate(c));

for (const mode of e2eModes()) {
  describe.skipIf(!!mode.skip)(`cert operator with helm, ${mode.name} mode${mode.skip ? ` (skipped: ${mode.skip})` : ''}`, () => {
    let cluster: E2ECluster;
    let acme: AcmeEnv;
    const kubectl = (...args: string[]) => cluster.kubectl(args);

    beforeAll(async () => {
      cluster = await startE2ECluster(mode.name, { apps: [app, solver], workloads: ['traefik', 'pebble'] });
      acme = mode.name === 'local' ? await localAcme(cluster, solver) : await kindAcme(cluster);
    });
    afterAll(async () => {
      await acme?.stop();
      await cluster?.stop();
    });

    for (const api of API_MODES)
      describe(`API mode ${api.name} (${api.cert})`, () => {
        const NS = api.ns;
        const r: Release = { release: 'cert', namespace: 'cert-system', app };
        let values: Record<string, unknown> = {};
        /** A kind of the mode's groups, qualified: both modes' CRDs are on the cluster in the second pass. */
        const q = (what: string) => {
          const [kind, name] = what.split('/') as [string, string | undefined];
          const group = /^(orders?|challenges?)$/.test(kind)
            ? api.acme
            : /^(certificates?|certificaterequests?|issuers?|clusterissuers?)$/.test(kind)
              ? api.cert
              : undefined;
          return `${group ? `${kind}.${group}` : kind}${name ? `/${name}` : ''}`;
        };
        const get = async (what: string, ns: string = NS) => JSON.parse((await kubectl('get', q(what), '-n', ns, '-o', 'json')).stdout) as Obj;
        const ready = (o: Obj) => o.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
        const waitReady = (what: string, timeoutMs = 90_000) => waitFor(`${what} Ready`, async () => ready(await get(what)), { timeoutMs, intervalMs: 500 });

        beforeAll(async () => {
          // In real containers, the webhooks on 10250 (what GKE private clusters let the control plane
          // reach): every request created below passes the identity webhook there, or is refused.
          values = { ...acme.chartValues, ...api.values, ...(mode.name === 'kind' ? { webhook: { port: 10250 } } : {}) };
          // Gateway API self-service, where a Gateway implementation runs (kind: Traefik).
          if (acme.gateway && api.name === 'opkit')
            values = { ...values, acme: { ...(values.acme as object), gatewayAPI: true, gatewaySelfService: true, gatewayListenerSets: true } };
          await kubectl('create', 'namespace', NS);
        });

        it('installs with helm: the six CRDs and the operator, ready', async () => {
          await helmInstall(cluster, r, values);
          const crds = (await kubectl('get', 'crds', '-o', 'name')).stdout;
          for (const crd of [
            `certificates.${api.cert}`,
            `certificaterequests.${api.cert}`,
            `issuers.${api.cert}`,
            `clusterissuers.${api.cert}`,
            `orders.${api.acme}`,
            `challenges.${api.acme}`,
          ]) {
            expect(crds).toContain(crd);
          }
        });

        it('issues SelfSigned → CA → leaf from the sample; the leaf chains to the CA', async () => {
          await cluster.kubectl(['apply', '-n', NS, '-f', '-'], { input: caSample.replaceAll('cert.opkit.dev', api.cert) });
          await waitReady('certificate/example-ca');
          await waitReady('issuer/example-ca');
          await waitReady('certificate/example-com');
          const ca = new X509Certificate(pem(await get('secret/example-ca'), 'tls.crt'));
          const leafSecret = await get('secret/example-com-tls');
          const leaf = new X509Certificate(pem(leafSecret, 'tls.crt'));
          expect(ca.ca).toBe(true);
          expect(leaf.verify(ca.publicKey)).toBe(true);
          expect(leaf.subjectAltName).toBe('DNS:example.com, DNS:www.example.com');
          expect(pem(leafSecret, 'ca.crt').trim()).toBe(ca.toString().trim());
        });

        it("records who made each CertificateRequest (the identity webhook, called by the API server): the operator's ServiceAccount, and no one can claim another user", async () => {
          const crs = (await get('certificaterequests')) as unknown as { items: { spec: { username?: string; groups?: string[] } }[] };
          expect(crs.items.length).toBeGreaterThan(0);
          for (const cr of crs.items) expect(cr.spec.username).toBe('system:serviceaccount:cert-system:cert-cert-operator');
          const forged = {
            apiVersion: `${api.cert}/v1`,
            kind: 'CertificateRequest',
            metadata: { name: 'forged' },
            spec: {
              request: crs.items.length ? (crs.items[0] as unknown as { spec: { request: string } }).spec.request : '',
              issuerRef: { name: 'does-not-exist' },
              username: 'alice',
              groups: ['team-a'],
            },
          };
          await cluster.kubectl(['create', '-n', NS, '-f', '-'], { input: JSON.stringify(forged) });
          try {
            // Recorded as whoever kubectl authenticates as here (the local admin, or kind's kubeadm admin), never as alice.
            const stored = (await get('certificaterequest/forged')) as unknown as { spec: { username?: string; groups?: string[] } };
            expect(stored.spec.username).toMatch(/admin/);
            expect(stored.spec.groups).toContain('system:authenticated');
            expect(stored.spec.groups).not.toContain('team-a');
          } finally {
            await kubectl('delete', q('certificaterequest/forged'), '-n', NS);
          }
        });

        it('issues from an ACME server over HTTP-01 through solver pods and the ingress; the chain verifies against its root', async () => {
          await cluster.kubectl(['apply', '-n', NS, '-f', '-'], {
            input: JSON.stringify({
              apiVersion: 'v1',
              kind: 'List',
              items: [
                {
                  apiVersion: `${api.cert}/v1`,
                  kind: 'Issuer',
                  metadata: { name: 'acme' },
                  spec: {
                    acme: {
                      server: acme.directoryUrl,
                      email: 'ops@example.test',
                      caBundle: Buffer.from(acme.tlsCaPem).toString('base64'),
                      privateKeySecretRef: { name: 'acme-account' },
                      solvers: [{ http01: { ingress: { ingressClassName: acme.ingressClass } } }],
                    },
                  },
                },
                {
                  apiVersion: `${api.cert}/v1`,
                  kind: 'Certificate',
                  metadata: { name: 'shop' },
                  spec: { secretName: 'shop-tls', dnsNames: ACME_NAMES, issuerRef: { name: 'acme' }, privateKey: { algorithm: 'ECDSA' } },
                },
              ],
            }),
          });
          // In real containers, the solver pods run under their memory limit: none restarts or is OOM-killed.
          const solverTrouble = new Set<string>();
          let watching = mode.name === 'kind';
          const watchSolvers = (async () => {
            while (watching) {
              const pods = JSON.parse((await kubectl('get', 'pods', '-n', NS, '-l', `${api.acme}/http01-solver=true`, '-o', 'json')).stdout) as {
                items: {
                  metadata: { name: string };
                  status?: {
                    containerStatuses?: {
                      restartCount: number;
                      state?: { terminated?: { reason?: string } };
                      lastState?: { terminated?: { reason?: string } };
                    }[];
                  };
                }[];
              };
              for (const p of pods.items) {
                for (const c of p.status?.containerStatuses ?? []) {
                  const reason = c.lastState?.terminated?.reason ?? c.state?.terminated?.reason;
                  if (c.restartCount > 0 || reason === 'OOMKilled') solverTrouble.add(`${p.metadata.name}: ${c.restartCount} restarts, ${reason ?? 'running'}`);
                }
              }
              await new Promise((res) => setTimeout(res, 1_000));
            }
          })();
          await waitReady('issuer/acme', 60_000);
          await waitReady('certificate/shop', 180_000).finally(() => (watching = false));
          await watchSolvers;
          expect([...solverTrouble]).toEqual([]);
          const [leaf, ...rest] = chainOf(pem(await get('secret/shop-tls'), 'tls.crt'));
          if (!leaf) throw new Error('secret/shop-tls holds no certificate');
          const chain = [leaf, ...rest, new X509Certificate(await acme.root())];
          for (let i = 0; i < chain.length - 1; i++) expect(chain[i]!.verify(chain[i + 1]!.publicKey)).toBe(true);
          expect(leaf.subjectAltName?.split(', ').sort()).toEqual(ACME_NAMES.map((n) => `DNS:${n}`));
          // Everything, ACME solvers included, was done as the chart's ServiceAccount.
          const who = operatorIdentities(cluster, 'cert-operator');
          if (who) expect(who).toEqual(['system:serviceaccount:cert-system:cert-cert-operator']);
          await waitFor(
            'challenges and solver objects removed',
            async () => {
              const left = await kubectl('get', `${q('challenges')},pods,services,ingresses`, '-n', NS, '-o', 'name');
              return left.stdout.trim() === '';
            },
            { timeoutMs: 60_000 },
          );
        });

        it('ingress-shim: an Ingress annotated cert-manager.io/issuer, served by the ingress controller, ends with a valid certificate from the ACME server', async () => {
          const t0 = Date.now();
          await cluster.kubectl(['apply', '-n', NS, '-f', '-'], {
            input: JSON.stringify({
              apiVersion: 'networking.k8s.io/v1',
              kind: 'Ingress',
              metadata: { name: 'storefront', annotations: { 'cert-manager.io/issuer': 'acme', 'cert-manager.io/private-key-algorithm': 'ECDSA' } },
              spec: {
                ingressClassName: acme.ingressClass,
                tls: [{ hosts: ['store.example.test'], secretName: 'store-tls' }],
                rules: [
                  {
                    host: 'store.example.test',
                    http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'storefront', port: { number: 80 } } } }] },
                  },
                ],
              },
            }),
          });
          await waitReady('certificate/store-tls', 180_000);
          console.log(`ingress-shim (${mode.name}): Ingress created → Certificate Ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
          const owner = (await get('certificate/store-tls')).metadata.ownerReferences?.[0];
          expect(owner).toMatchObject({ kind: 'Ingress', name: 'storefront' });
          const [leaf, ...rest] = chainOf(pem(await get('secret/store-tls'), 'tls.crt'));
          if (!leaf) throw new Error('secret/store-tls holds no certificate');
          const chain = [leaf, ...rest, new X509Certificate(await acme.root())];
          for (let i = 0; i < chain.length - 1; i++) expect(chain[i]!.verify(chain[i + 1]!.publicKey)).toBe(true);
          expect(leaf.subjectAltName).toBe('DNS:store.example.test');
          // The Ingress deleted: its Certificate goes with it (owner reference), and its requests and
          // orders with that (theirs); the Secret stays. The garbage collector removes them one owner
          // after another, so the Certificate's absence alone says nothing about its requests: a
          // busy machine has caught them still going (two objects gone during the restart test).
          await kubectl('delete', 'ingress/storefront', '-n', NS, '--wait=true');
          await waitFor(
            'the Certificate collected with its Ingress, and its requests and orders with it',
            async () => {
              const certificates = await kubectl('get', q('certificates'), '-n', NS, '-o', 'name');
              const label = `${api.cert}/certificate-name=store-tls`;
              const dependents = await kubectl('get', `${q('certificaterequests')},${q('orders')}`, '-n', NS, '-o', 'name', '-l', label);
              return !certificates.stdout.includes('store-tls') && dependents.stdout.trim() === '';
            },
            { timeoutMs: 120_000, intervalMs: 500 },
          );
          await kubectl('delete', 'secret/store-tls', '-n', NS);
        });

        it.runIf(mode.name === 'kind' && api.name === 'opkit')(
          "Gateway API self-service: a team annotates its own HTTPRoute; the operator adds an HTTPS listener to the platform's Gateway, HTTP-01 passes through the Gateway (Traefik), and the host is served over TLS with the certificate",
          async () => {
            const gw = acme.gateway!;
            const host = 'shop.apps.example.test';
            const apply = (obj: object, manager: string) =>
              cluster.kubectl(['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'], { input: JSON.stringify(obj) });
            const t0 = Date.now();
            try {
              // The platform team: a shared Gateway (HTTP on Traefik's web entry point) offering
              // self-service to tenant namespaces under *.apps.example.test, through its ClusterIssuer.
              await apply(
                {
                  apiVersion: 'v1',
                  kind: 'List',
                  items: [
                    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'infra' } },
                    {
                      apiVersion: `${api.cert}/v1`,
                      kind: 'ClusterIssuer',
                      metadata: { name: 'platform' },
                      spec: {
                        acme: {
                          server: acme.directoryUrl,
                          email: 'platform@example.test',
                          caBundle: Buffer.from(acme.tlsCaPem).toString('base64'),
                          privateKeySecretRef: { name: 'platform-acme-account' },
                          solvers: [{ http01: { gatewayHTTPRoute: { parentRefs: [{ kind: 'Gateway', name: 'public', namespace: 'infra' }] } } }],
                        },
                      },
                    },
                    {
                      apiVersion: 'gateway.networking.k8s.io/v1',
                      kind: 'Gateway',
                      metadata: {
                        name: 'public',
                        namespace: 'infra',
                        annotations: {
                          'cert.opkit.dev/self-service-namespaces': 'tenant=true',
                          'cert.opkit.dev/self-service-hostnames': '*.apps.example.test',
                          'cert.opkit.dev/self-service-issuers': 'ClusterIssuer/platform',
                          'cert.opkit.dev/self-service-port': String(gw.ports.https),
                        },
                      },
                      spec: {
                        gatewayClassName: gw.className,
                        listeners: [{ name: 'http', port: gw.ports.http, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
                      },
                    },
                  ],
                },
                'platform-team',
              );
              // The application team: its namespace, its backend (a responder that answers one path
              // for its host) and its route, annotated with the issuer; nothing on the Gateway.
              // The solver image, as the chart gave it to the operator (kind: from the local registry, by digest).
              const solverArg = (await operatorPods(cluster, r))[0]?.args.find((a) => a.startsWith('--acme-http01-solver-image='));
              if (!solverArg) throw new Error('the operator was given no --acme-http01-solver-image');
              const backend = solverArg.slice('--acme-http01-solver-image='.length);
              await apply(
                {
                  apiVersion: 'v1',
                  kind: 'List',
                  items: [
                    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { tenant: 'true' } } },
                    {
                      apiVersion: 'apps/v1',
                      kind: 'Deployment',
                      metadata: { name: 'web', namespace: 'team-a' },
                      spec: {
                        selector: { matchLabels: { app: 'web' } },
                        template: {
                          metadata: { labels: { app: 'web' } },
                          spec: {
                            securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
                            containers: [
                              {
                                name: 'web',
                                image: backend,
                                imagePullPolicy: 'IfNotPresent',
                                args: ['--listen-port=8089', `--domain=${host}`, '--token=hello', '--key=hello.from-team-a'],
                                ports: [{ containerPort: 8089 }],
                                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                              },
                            ],
                          },
                        },
                      },
                    },
                    {
                      apiVersion: 'v1',
                      kind: 'Service',
                      metadata: { name: 'web', namespace: 'team-a' },
                      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8089 }] },
                    },
                    {
                      apiVersion: 'gateway.networking.k8s.io/v1',
                      kind: 'HTTPRoute',
                      metadata: { name: 'shop', namespace: 'team-a', annotations: { 'cert.opkit.dev/cluster-issuer': 'platform' } },
                      spec: { parentRefs: [{ name: 'public', namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
                    },
                  ],
                },
                'team-a',
              );
              await waitReady('clusterissuer/platform', 60_000);
              await waitFor(
                'certificate shop-tls Ready in team-a',
                async () => {
                  const cert = await get('certificate/shop-tls', 'team-a').catch(() => undefined);
                  return (cert && ready(cert)) || undefined;
                },
                { timeoutMs: 180_000, intervalMs: 1_000 },
              );
              console.log(`gateway self-service (kind): HTTPRoute created → Certificate Ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

              type Route = { status?: { parents?: { controllerName: string; conditions?: { type: string; status: string; reason?: string }[] }[] } };
              const parents = async () => ((await get('httproute/shop', 'team-a')) as unknown as Route).status?.parents ?? [];
              const condition = (p: Awaited<ReturnType<typeof parents>>, controller: string, type: string) =>
                p.find((x) => x.controllerName === controller)?.conditions?.find((c) => c.type === type)?.status;
              await waitFor(
                "the route's verdicts: self-service accepted, its certificate ready, and Traefik's Accepted",
                async () => {
                  const p = await parents();
                  return (
                    (condition(p, 'cert.opkit.dev/self-service', 'SelfService') === 'True' &&
                      condition(p, 'cert.opkit.dev/self-service', 'CertificateReady') === 'True' &&
                      condition(p, 'traefik.io/gateway-controller', 'Accepted') === 'True') ||
                    undefined
                  );
                },
                { timeoutMs: 60_000, intervalMs: 1_000 },
              );
              type GatewayObj = {
                spec: {
                  listeners: {
                    name: string;
                    hostname?: string;
                    port: number;
                    protocol: string;
                    tls?: { certificateRefs?: { name: string; namespace?: string }[] };
                  }[];
                };
                status?: { listeners?: { name: string; conditions?: { type: string; status: string }[] }[] };
              };
              const gateway = async () => (await get('gateway/public', 'infra')) as unknown as GatewayObj;
              const listener = (await gateway()).spec.listeners.find((l) => l.hostname === host);
              expect(listener).toMatchObject({
                port: gw.ports.https,
                protocol: 'HTTPS',
                tls: { certificateRefs: [{ name: 'shop-tls', namespace: 'team-a' }] },
              });
              // The platform team's own listener is untouched.
              expect((await gateway()).spec.listeners.find((l) => l.name === 'http')).toMatchObject({ port: gw.ports.http, protocol: 'HTTP' });
              await waitFor(
                'Traefik to program the HTTPS listener',
                async () =>
                  (await gateway()).status?.listeners
                    ?.find((l) => l.name === listener!.name)
                    ?.conditions?.some((c) => c.type === 'Programmed' && c.status === 'True') || undefined,
                { timeoutMs: 60_000, intervalMs: 1_000 },
              );

              // A client of the shop: HTTPS to the Gateway for the host, trusting only the ACME CA's root.
              const [leaf] = chainOf(pem(await get('secret/shop-tls', 'team-a'), 'tls.crt'));
              const root = await acme.root();
              const forward = await portForward(cluster, gw.service.namespace, `svc/${gw.service.name}`, 443);
              try {
                const fetchShop = () =>
                  new Promise<{ status: number; body: string; peer: string }>((resolve, reject) => {
                    const req = request(
                      {
                        host: '127.0.0.1',
                        port: forward.port,
                        servername: host,
                        path: '/.well-known/acme-challenge/hello',
                        headers: { host },
                        ca: root,
                        timeout: 5_000,
                      },
                      (res) => {
                        // Read now: the socket is detached from the response once it has ended.
                        const peer = (res.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '';
                        let body = '';
                        res.on('data', (c: Buffer) => (body += c.toString()));
                        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
                        res.on('error', reject);
                      },
                    );
                    req.on('error', reject);
                    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
                    req.end();
                  });
                // Not at once: Traefik loads the certificate, and the backend's endpoints, a moment after.
                const answer = await waitFor(
                  `https://${host}/ served through the Gateway with the issued certificate`,
                  async () => {
                    const a = await fetchShop();
                    if (a.status === 200) return a;
                    const pods = (await kubectl('get', 'pods,endpointslices', '-n', 'team-a', '-o', 'wide')).stdout;
                    throw new Error(`HTTP ${a.status} ${a.body.trim()}\n${pods}`);
                  },
                  { timeoutMs: 90_000, intervalMs: 1_000 },
                );
                expect(answer).toEqual({ status: 200, body: 'hello.from-team-a', peer: leaf!.fingerprint256 });
              } finally {
                forward.stop();
              }

              // The team stops asking: its Certificate, grant and listener go; the platform's stays.
              await kubectl('annotate', 'httproute/shop', '-n', 'team-a', 'cert.opkit.dev/cluster-issuer-');
              await waitFor(
                'the self-service listener and Certificate removed',
                async () =>
                  (!(await gateway()).spec.listeners.some((l) => l.hostname === host) &&
                    !(await kubectl('get', q('certificates'), '-n', 'team-a', '-o', 'name')).stdout.includes('shop-tls')) ||
                  undefined,
                { timeoutMs: 60_000, intervalMs: 1_000 },
              );
              expect((await gateway()).spec.listeners.map((l) => l.name)).toEqual(['http']);
            } finally {
              // Whatever happened, the rest of this pass starts without it (its uninstall counts leftovers).
              await kubectl('delete', 'namespace', 'team-a', 'infra', '--ignore-not-found', '--wait=true', '--timeout=120s');
              await kubectl('delete', q('clusterissuer/platform'), '--ignore-not-found', '--wait=true');
              // Its account key, kept as every ACME account key is, goes with the rest of this pass.
              await kubectl('delete', 'secret', 'platform-acme-account', '-n', r.namespace, '--ignore-not-found');
            }
          },
          420_000,
        );

        it.runIf(mode.name === 'kind')(
          "helm test: the chart's test Pod reads the operator's metrics through its Service, cert-manager's certificate metrics among them",
          async () => {
            // The test Pod fails unless /metrics carries certmanager_certificate_{expiration_timestamp_seconds,ready_status,renewal_timestamp_seconds}.
            expect(await helmTest(cluster, r)).toMatch(/TEST SUITE:\s+cert-cert-operator-test-metrics[\s\S]*Phase:\s+Succeeded/);
          },
        );

        it.runIf(mode.name === 'kind' && api.name === 'opkit')(
          "the images carry opkit's licence, the licence texts of the npm packages bundled in them, and Node's licence",
          async () => {
            const license = readFileSync(join(workspaceRoot(), 'LICENSE'), 'utf8');
            const appNotices = await appImageNotices(`${app.image.repository}:${app.image.tag}`);
            expect(appNotices.license).toBe(license);
            expect(appNotices.node).toMatch(/^Node\.js is licensed for use as follows/);
            expect(appNotices.thirdParty).toMatch(/^ {2}acme-client@\S+ {2}MIT$/m);
            const solverNotices = await appImageNotices(`${solver.image.repository}:${solver.image.tag}`);
            expect(solverNotices.license).toBe(license);
            expect(solverNotices.node).toMatch(/^Node\.js is licensed for use as follows/);
            expect(solverNotices.thirdParty).toContain('bundles no npm packages');
          },
        );

        it('a restarted operator does not redo finished work', async () => {
          const kinds = ['certificates', 'certificaterequests', 'issuers', 'orders', 'secrets'].map(q);
          expect(await changesAcrossRestart(cluster, r, kinds, [NS])).toEqual([]);
        });

        it('helm upgrade with changed values (certificateOwnerRef) rolls the operator, which hands issued Secrets to their Certificates', async () => {
          values = { ...values, certificateOwnerRef: true };
          await helmInstall(cluster, r, values);
          const pod = (await operatorPods(cluster, r))[0]!;
          expect(pod.args).toContain('--enable-certificate-owner-ref');
          for (const [secret, cert] of [
            ['example-ca', 'example-ca'],
            ['example-com-tls', 'example-com'],
            ['shop-tls', 'shop'],
          ]) {
            await waitFor(
              `Secret ${secret} owned by Certificate ${cert}`,
              async () => (await get(`secret/${secret}`)).metadata.ownerReferences?.some((o) => o.kind === 'Certificate' && o.name === cert),
              { timeoutMs: 60_000 },
            );
          }
        });

        it('helm uninstall, after the Certificates and Issuers are deleted, leaves nothing the operator made but the ACME account key; CRDs are kept', async () => {
          await kubectl('delete', `${q('certificates')},${q('issuers')}`, '--all', '-n', NS, '--wait=true', '--timeout=60s');
          await cluster.helm(['uninstall', r.release, '--namespace', r.namespace, '--wait']);
          await waitFor('the operator pods gone', async () => (await operatorPods(cluster, r)).length === 0, { timeoutMs: 60_000 });
          await kubectl('get', 'crd', `certificates.${api.cert}`);
          // Kept by policy, as cert-manager does: an ACME account key is the account; deleting it loses it.
          const keep = (o: { kind: string; name: string }) => o.kind === 'Secret' && o.name === 'acme-account';
          const resources = ['secrets', 'certificaterequests', 'orders', 'challenges', 'pods', 'services', 'ingresses', 'leases', 'configmaps'].map(q);
          await waitFor('nothing left but the account key', async () => (await leftovers(cluster, 'cert-operator', resources, keep)).length === 0, {
            timeoutMs: 90_000,
          });
          expect(await leftovers(cluster, 'cert-operator', ['secrets'])).toEqual([`Secret ${NS}/acme-account`]);
          // The next pass starts from a cluster with nothing of this one's but its CRDs.
          await kubectl('delete', 'namespace', NS, '--wait=true', '--timeout=120s');
        });
      });
  });
}
