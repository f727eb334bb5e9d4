import {
  Client,
  CoreEvent,
  CustomResourceDefinition,
  Informer,
  Ingress,
  Pod,
  Secret,
  Service,
  silentLogger,
  Transport,
  type Kind,
  type KubeObject,
  type Manager,
  type ObjectOf,
} from '@opkit/runtime';
import { metricValue, scrape, testManager } from '@opkit/runtime/testing';
import {
  freePort,
  gatewayApiCrds,
  kubectlApply,
  startControlPlane,
  startIngressStandIn,
  startPebble,
  waitFor,
  workspaceApp,
  type ControlPlane,
  type IngressStandIn,
  type Pebble,
} from '@opkit/testing';
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HTTPRoute } from '../../acme/solver-resources.js';
import { defaultConfig } from '../../config.js';
import { createCSR } from '../../pki/csr.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Certificate, CertificateRequest, Challenge, Issuer, Order } = CERT_APIS.opkit;
const SOLVER_LABEL = CERT_APIS.opkit.solverLabels.solver;

const OPERATOR = 'cert-operator';
const SYSTEM = 'opkit-system';
// The solver image as the ingress stand-in runs it: its ENTRYPOINT and CMD, its bundle built here.
const SOLVER = workspaceApp('acme-solver');
const SELF_CHECK_TIMEOUT_S = 20;

/** ingress-nginx's admission rule for path types (its `validPathType`), as a ValidatingAdmissionPolicy. */
const INGRESS_NGINX_STRICT_PATHS = {
  policy: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'ingress-nginx-strict-path-type' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'] }],
      },
      validations: [
        {
          expression:
            "!has(object.spec.rules) || object.spec.rules.all(r, !has(r.http) || r.http.paths.all(p, !(p.pathType in ['Exact', 'Prefix']) || p.path.matches('^/[A-Za-z0-9/_-]*$')))",
          message: 'ingress contains invalid paths: a path of pathType Exact or Prefix may only contain letters, digits, "/", "_" and "-"',
        },
      ],
    },
  },
  binding: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'ingress-nginx-strict-path-type' },
    spec: { policyName: 'ingress-nginx-strict-path-type', validationActions: ['Deny'] },
  },
};

const pem = (s: { data?: Record<string, string> }, k: string) => Buffer.from(s.data?.[k] ?? '', 'base64').toString();
const splitPem = (chain: string) => chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!.map((p) => new X509Certificate(p));
const cond = (c: { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }, type: string) =>
  c.status?.conditions?.find((x) => x.type === type);

/**
 * The ACME issuer against Pebble with real HTTP-01 validation. The simulated cluster does not run
 * pods, so the ingress stand-in plays the ingress controller: Pebble's requests (and the operator's
 * self-check) reach it through Pebble's DNS (every name → 127.0.0.1), and it routes them by Host
 * through the Ingress and Service the operator made to the solver pod's container, run locally
 * from apps/acme-solver with the args of the pod spec.
 */
describe('ACME issuance against Pebble, with HTTP-01 solver pods', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let logs: ReturnType<typeof testManager>['logs'];
  let standIn: IngressStandIn;
  let pebble: Pebble;
  let httpPort: number;
  const others: Pebble[] = [];
  let n = 0;

  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const ns = async () => {
    const name = `acme${++n}`;
    await plane.kubectl(['create', 'namespace', name]);
    return name;
  };
  const issuer = async (
    namespace: string,
    name: string,
    server: Pebble,
    http01: object = { ingress: { ingressClassName: 'nginx' } },
    extra: object = {},
    ready = 'True',
  ) => {
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name, namespace },
      spec: {
        acme: {
          server: server.directoryUrl,
          email: 'ops@example.test',
          caBundle: Buffer.from(server.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: `${name}-account` },
          solvers: [{ http01 }],
          ...extra,
        },
      },
    });
    return waitFor(
      `Issuer ${name} Ready=${ready}`,
      async () => {
        const i = await admin.get(Issuer.kind, { namespace, name });
        return cond(i, 'Ready')?.status === ready && i;
      },
      { timeoutMs: 30_000 },
    );
  };
  const cert = (namespace: string, name: string, issuerName: string, dnsNames: string[]) =>
    apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name, namespace },
      spec: { secretName: name, issuerRef: { name: issuerName }, dnsNames, privateKey: { algorithm: 'ECDSA' } },
    });
  const getCert = (namespace: string, name: string) => admin.get(Certificate.kind, { namespace, name });
  const waitReady = (namespace: string, name: string, timeoutMs = 60_000) =>
    waitFor(
      `Certificate ${name} Ready`,
      async () => {
        const c = await getCert(namespace, name);
        return cond(c, 'Ready')?.status === 'True' && c;
      },
      { timeoutMs, intervalMs: 250 },
    );
  const challenges = async (namespace: string) => (await admin.list(Challenge.kind, { namespace })).items;
  /** The namespace's one Challenge, once it ended errored (the self-check timeout and some). */
  const challengeGivenUp = (namespace: string) =>
    waitFor(
      'the Challenge to give up',
      async () => {
        const [x] = await challenges(namespace);
        return x?.status?.state === 'errored' && x;
      },
      { timeoutMs: (SELF_CHECK_TIMEOUT_S + 30) * 1000 },
    );
  const solverObjects = async (namespace: string) => {
    const labelSelector = `${SOLVER_LABEL}=true`;
    return [
      ...(await admin.list(Pod, { namespace, labelSelector })).items,
      ...(await admin.list(Service, { namespace, labelSelector })).items,
      ...(await admin.list(Ingress, { namespace, labelSelector })).items,
    ];
  };
  /** Every object of a kind seen in a namespace, however briefly it lived. */
  const record = async <T extends KubeObject>(kind: Kind<T>, namespace: string) => {
    const seen = new Map<string, T>();
    const versions: T[] = [];
    const add = (o: T) => (seen.set(o.metadata.uid!, o), versions.push(o));
    const inf = new Informer(new Transport(plane.kubeConfig), kind, silentLogger(), { namespace });
    inf.addHandler({ onAdd: add, onUpdate: (_, o) => add(o) });
    inf.start();
    await inf.waitForSync();
    return { seen, versions, stop: () => inf.stop() };
  };
  /** The issued chain verifies up to the server's root. */
  const verifyChain = async (secret: ObjectOf<typeof Secret>, server: Pebble, dnsNames: string[]) => {
    const [leaf, ...intermediates] = splitPem(pem(secret, 'tls.crt'));
    if (!leaf) throw new Error('the Secret holds no certificate');
    const root = new X509Certificate(await server.root());
    const chain = [leaf, ...intermediates, root];
    for (let i = 0; i < chain.length - 1; i++) {
      expect(chain[i]!.checkIssued(chain[i + 1]!)).toBe(true);
      expect(chain[i]!.verify(chain[i + 1]!.publicKey)).toBe(true);
    }
    expect(intermediates.length).toBeGreaterThanOrEqual(1);
    expect(leaf.subjectAltName?.split(', ').sort()).toEqual(dnsNames.map((d) => `DNS:${d}`).sort());
    expect(leaf.checkPrivateKey(createPrivateKey(pem(secret, 'tls.key')))).toBe(true);
  };

  beforeAll(async () => {
    if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
    plane = await startControlPlane({ nodes: 1 });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    // The Gateway API's published CRDs: HTTPRoute solvers need them, and --enable-gateway-api also
    // runs gateway-shim, which watches Gateways.
    await kubectlApply(plane.kubeconfigPath, (await gatewayApiCrds()).join('\n---\n'));
    await waitFor('CRDs served', () => Promise.all([admin.list(Challenge.kind), admin.list(HTTPRoute)]).then(() => true));
    await plane.kubectl(['create', 'namespace', SYSTEM]);
    // ingress-nginx's strict path-type validation (on by default since controller 1.12), for every
    // Ingress of every test here: a path of type Exact or Prefix may hold only letters, digits, '/',
    // '_' and '-', so /.well-known/acme-challenge/<token> must not be one.
    await apply(INGRESS_NGINX_STRICT_PATHS.policy);
    await apply(INGRESS_NGINX_STRICT_PATHS.binding);
    // One ingress for every Pebble here: they all validate on the same port.
    httpPort = await freePort();
    standIn = await startIngressStandIn(plane.kubeConfig, { port: httpPort, images: { [SOLVER.image.repository]: SOLVER.local }, ingressClass: 'nginx' });
    pebble = await startPebble({ httpPort });
    await startManager();
  });
  async function startManager() {
    const t = testManager(plane.kubeConfig, { name: OPERATOR });
    manager = t.manager;
    logs = t.logs;
    addCertificateControllers(
      manager,
      defaultConfig({
        clusterResourceNamespace: SYSTEM,
        selfCheckNameservers: [pebble.dnsServer],
        selfCheckPort: httpPort,
        selfCheck: { requiredPasses: 2, intervalMs: 500, timeoutMs: SELF_CHECK_TIMEOUT_S * 1000 },
        enableGatewayAPI: true,
      }),
    );
    await manager.start();
  }
  /** A new operator process, as after a pod restart: nothing in memory survives. */
  async function restartManager() {
    await manager.stop();
    await startManager();
  }
  // A failing test shows where each object of its namespace got stuck.
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    const namespace = `acme${n}`;
    const out = await plane
      .kubectl(['get', 'certificates,certificaterequests,orders,challenges,pods,services,ingresses', '-n', namespace, '-o', 'yaml'])
      .catch((e: Error) => ({ stdout: e.message }));
    console.log(
      `--- state of ${namespace} ---\n${out.stdout}\n--- operator errors ---\n${JSON.stringify(
        logs
          .find(/./)
          .filter((l) => (l as { level: number }).level >= 40)
          .slice(-20),
        null,
        1,
      )}\n--- ingress stand-in ---\n${JSON.stringify(standIn.requests.slice(-10))}`,
    );
  });
  afterAll(async () => {
    await manager?.stop();
    await standIn?.stop();
    for (const p of [pebble, ...others]) await p?.stop();
    await plane?.stop();
  });

  it("issues a certificate for two DNS names through solver pods; the chain verifies against Pebble's root; the solvers are gone afterwards", async () => {
    const namespace = await ns();
    const iss = await issuer(namespace, 'le', pebble);
    expect(cond(iss, 'Ready')).toMatchObject({ reason: 'ACMEAccountRegistered' });
    expect(iss.status?.acme?.uri).toMatch(new RegExp(`^${new URL(pebble.directoryUrl).origin}/`));
    const accountKey = await admin.get(Secret, { namespace, name: 'le-account' });
    expect(createPrivateKey(pem(accountKey, 'tls.key')).asymmetricKeyType).toBe('ec');

    const requestsBefore = metricValue((await scrape(manager, '/metrics')).body, 'certmanager_http_acme_client_request_count');
    const pods = await record(Pod, namespace);
    const services = await record(Service, namespace);
    const ingresses = await record(Ingress, namespace);
    const chs = await record(Challenge.kind, namespace);
    const started = Date.now();
    const names = ['shop.example.test', 'www.shop.example.test'];
    await cert(namespace, 'web', 'le', names);
    const c = await waitReady(namespace, 'web');
    // What it cost the CA, as the operator's own metrics count it.
    const metrics = (await scrape(manager, '/metrics')).body;
    const requests = metricValue(metrics, 'certmanager_http_acme_client_request_count') - requestsBefore;
    console.log(`ACME certificate for 2 names issued in ${Date.now() - started} ms with ${requests} requests to the CA`);
    expect(requests).toBeGreaterThan(0);
    expect(metricValue(metrics, 'certmanager_http_acme_client_request_count', { method: 'POST', path: '/order-plz', status: '201' })).toBeGreaterThanOrEqual(1);
    await verifyChain(await admin.get(Secret, { namespace, name: 'web' }), pebble, names);
    expect(c.status?.revision).toBe(1);
    // Pebble, as Let's Encrypt's classic profile, added a common name the CSR did not ask for: the
    // certificate is still what was requested, and is not issued again.
    expect(new X509Certificate(pem(await admin.get(Secret, { namespace, name: 'web' }), 'tls.crt')).subject).toBe(`CN=${names[0]}`);

    // One Challenge per name, each with a solver pod, Service and Ingress shaped as cert-manager's.
    expect([...chs.seen.values()].map((ch) => ch.spec.dnsName).sort()).toEqual(names);
    expect(pods.seen.size).toBe(2);
    for (const pod of pods.seen.values()) {
      const ch = [...chs.seen.values()].find((x) => x.metadata.uid === pod.metadata.ownerReferences?.[0]?.uid)!;
      expect(ch).toBeDefined();
      expect(pod.spec?.automountServiceAccountToken).toBe(false);
      expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true);
      const container = pod.spec!.containers[0]!;
      expect(container.image).toBe('opkit/acme-solver:0.1.0');
      expect(container.args).toEqual(['--listen-port=8089', `--domain=${ch.spec.dnsName}`, `--token=${ch.spec.token}`, `--key=${ch.spec.key}`]);
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(container.resources).toEqual({ requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } });
    }
    expect([...services.seen.values()].filter((s) => s.metadata.labels?.[SOLVER_LABEL]).map((s) => s.spec?.type)).toEqual(['NodePort', 'NodePort']);
    const rules = [...ingresses.seen.values()].map((i) => i.spec?.rules?.[0]);
    expect(rules.map((r) => r?.host).sort()).toEqual(names);
    for (const r of rules)
      expect(r?.http?.paths).toEqual([
        expect.objectContaining({ pathType: 'ImplementationSpecific', path: expect.stringMatching(/^\/\.well-known\/acme-challenge\/[\w-]+$/) }),
      ]);

    // Each Challenge's status written once per step a user sees (scheduled; presented, with the
    // CA's state and the self-check's first verdict; accepted; valid), and again only when the
    // self-check's reason changed: learning the CA's state and presenting are no writes of their own.
    for (const ch of chs.seen.values()) {
      const versions = chs.versions.filter((v) => v.metadata.uid === ch.metadata.uid);
      expect(versions.filter((v) => v.status?.state && !v.status.presented)).toEqual([]);
      const waiting = new Set(versions.map((v) => v.status?.reason).filter((r) => r?.startsWith('Waiting for')));
      expect(versions.length).toBeLessThanOrEqual(5 + Math.max(0, waiting.size - 1));
    }

    // The owner chain: Certificate → CertificateRequest → Order → Challenge → solver objects.
    const order = (await admin.list(Order.kind, { namespace })).items[0]!;
    const cr = (await admin.list(CertificateRequest.kind, { namespace })).items[0]!;
    expect(order.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CertificateRequest', uid: cr.metadata.uid });
    expect(cr.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Certificate', uid: c.metadata.uid });
    for (const ch of chs.seen.values()) expect(ch.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Order', uid: order.metadata.uid });
    expect(order.status?.state).toBe('valid');

    // Pebble really validated through the route, and the solvers answered it.
    const validations = standIn.requests.filter((r) => /Pebble-VA/.test(r.userAgent) && names.includes(r.host));
    expect(validations.length).toBeGreaterThanOrEqual(2);
    expect(validations.every((r) => r.status === 200 && r.pod?.startsWith(`${namespace}/`))).toBe(true);

    // Done: challenges and every solver object removed, the local solver processes ended.
    await waitFor('challenges and solver objects removed', async () => !(await challenges(namespace)).length && !(await solverObjects(namespace)).length, {
      timeoutMs: 30_000,
    });
    await waitFor('solver processes ended', () => !standIn.running().some((p) => p.startsWith(`${namespace}/`)), { timeoutMs: 10_000 });
    // The account was registered once and reused.
    const registered = (await admin.list(CoreEvent, { namespace, fieldSelector: 'involvedObject.kind=Issuer,reason=ACMEAccountRegistered' })).items;
    expect(registered.reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(1);
    // Still one issuance, one request, one order, a while later.
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await getCert(namespace, 'web')).status?.revision).toBe(1);
    expect((await admin.list(CertificateRequest.kind, { namespace })).items.map((r) => r.metadata.name)).toEqual(['web-1']);
    expect((await admin.list(Order.kind, { namespace })).items).toHaveLength(1);
    for (const r of [pods, services, ingresses, chs]) await r.stop();
  });

  // Order.spec.duration was documented as sent to the CA and never was.
  it("sends the Certificate's duration as the order's notAfter when the issuer enables it, and not otherwise", async () => {
    const namespace = await ns();
    await issuer(namespace, 'with-duration', pebble, undefined, { enableDurationFeature: true });
    await issuer(namespace, 'without', pebble);
    for (const [name, issuerName] of [
      ['short', 'with-duration'],
      ['default', 'without'],
    ] as const)
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Certificate',
        metadata: { name, namespace },
        spec: { secretName: name, issuerRef: { name: issuerName }, dnsNames: [`${name}.example.test`], duration: '720h', privateKey: { algorithm: 'ECDSA' } },
      });
    const lifetime = async (name: string) => {
      await waitReady(namespace, name);
      const leaf = new X509Certificate(pem(await admin.get(Secret, { namespace, name }), 'tls.crt'));
      return (Date.parse(leaf.validTo) - Date.now()) / 3_600_000;
    };
    // Asked for 720 h: the CA's certificate ends then (give or take the test's own minutes).
    expect(Math.abs((await lifetime('short')) - 720)).toBeLessThan(0.5);
    // Not asked: the CA's own lifetime (Pebble's default profile: 90 days and more).
    expect(await lifetime('default')).toBeGreaterThan(1_000);
  });

  it("a wrong key authorization seen by the CA: the Challenge is invalid with the CA's reason, the Certificate not Ready, the backoff recorded", async () => {
    const namespace = await ns();
    await issuer(namespace, 'le', pebble);
    // The cluster's self-check still reaches the solver; the CA sees another server's answer.
    standIn.answerCAWith('wrong.example.test', 'not-the-key-authorization');
    await cert(namespace, 'wrong', 'le', ['wrong.example.test']);
    const ch = await waitFor(
      'the Challenge to be invalid',
      async () => {
        const [x] = await challenges(namespace);
        return x?.status?.state === 'invalid' && x;
      },
      { timeoutMs: 60_000 },
    );
    expect(ch.status?.reason).toMatch(/^the ACME server rejected the challenge: The key authorization file from the server did not match this challenge/);
    const c = await waitFor(
      'the failure recorded on the Certificate',
      async () => {
        const x = await getCert(namespace, 'wrong');
        return x.status?.failedIssuanceAttempts === 1 && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(cond(c, 'Ready')?.status).toBe('False');
    expect(cond(c, 'Issuing')).toMatchObject({ status: 'False', reason: 'Failed', message: expect.stringMatching(/did not match this challenge/) });
    expect(Date.parse(c.status!.lastFailureTime!)).toBeGreaterThan(Date.now() - 60_000);
    const order = (await admin.list(Order.kind, { namespace })).items[0]!;
    expect(order.status).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/^challenge for wrong\.example\.test failed:/) });
    // Backing off: no new request or order is made at once (cert-manager's first retry is after 1 h).
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await admin.list(Order.kind, { namespace })).items).toHaveLength(1);
    expect((await admin.list(CertificateRequest.kind, { namespace })).items).toHaveLength(1);
  });

  it('refuses a common name outside the DNS names, as cert-manager: the request fails with the reason, and no Order reaches the CA', async () => {
    const namespace = await ns();
    await issuer(namespace, 'le', pebble);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'cn', namespace },
      spec: { secretName: 'cn', issuerRef: { name: 'le' }, commonName: 'Internal Service', dnsNames: ['cn.example.test'], privateKey: { algorithm: 'ECDSA' } },
    });
    const c = await waitFor(
      'the failure recorded on the Certificate',
      async () => {
        const x = await getCert(namespace, 'cn');
        return x.status?.failedIssuanceAttempts === 1 && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(cond(c, 'Ready')?.status).toBe('False');
    expect(cond(c, 'Issuing')?.message).toMatch(/the common name "Internal Service" must be one of the DNS names/);
    expect((await admin.list(Order.kind, { namespace })).items).toEqual([]);
  });

  it('a self-check that cannot pass: the reason shown while waiting, a deleted solver pod recreated, then the CA asked, which fails it', async () => {
    const namespace = await ns();
    // Solver Ingresses of a class no ingress controller serves: the route never reaches the solver.
    await issuer(namespace, 'misrouted', pebble, { ingress: { ingressClassName: 'unserved' } });
    await cert(namespace, 'stuck', 'misrouted', ['stuck.example.test']);
    const waiting = await waitFor(
      'the self-check failure shown on the Certificate',
      async () => {
        const x = await getCert(namespace, 'stuck');
        return /Waiting for HTTP-01 challenge propagation/.test(cond(x, 'Issuing')?.message ?? '') && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(cond(waiting, 'Issuing')?.message).toMatch(
      /stuck\.example\.test: Waiting for HTTP-01 challenge propagation: GET http:\/\/stuck\.example\.test:\d+\/\.well-known\/acme-challenge\/[\w-]+: expected status 200, got 404/,
    );
    const ch = (await challenges(namespace))[0]!;
    expect(ch.status).toMatchObject({ state: 'pending', presented: true, processing: true });

    const pod = (await admin.list(Pod, { namespace, labelSelector: `${SOLVER_LABEL}=true` })).items[0]!;
    await admin.delete(Pod, { namespace, name: pod.metadata.name! }, { gracePeriodSeconds: 0 });
    const replacement = await waitFor(
      'a new solver pod',
      async () => {
        const [p] = (await admin.list(Pod, { namespace, labelSelector: `${SOLVER_LABEL}=true` })).items.filter(
          (p) => p.metadata.uid !== pod.metadata.uid && !p.metadata.deletionTimestamp,
        );
        return p;
      },
      { timeoutMs: 15_000 },
    );
    expect(replacement.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Challenge', uid: ch.metadata.uid });
    expect(replacement.spec?.containers[0]?.args).toEqual(pod.spec?.containers[0]?.args);

    // Past the timeout the CA decides: here it cannot reach the solver either, and says so.
    const failed = await waitFor(
      'the CA to reject the Challenge',
      async () => {
        const [x] = await challenges(namespace);
        return x?.status?.state === 'invalid' && x;
      },
      { timeoutMs: (SELF_CHECK_TIMEOUT_S + 30) * 1000 },
    );
    expect(failed.status?.reason).toMatch(/^the ACME server rejected the challenge: /);
    const timedOutEvents = (await admin.list(CoreEvent, { namespace, fieldSelector: `involvedObject.name=${failed.metadata.name}` })).items.filter(
      (e) => e.reason === 'SelfCheckTimedOut',
    );
    expect(timedOutEvents.map((e) => e.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^self-check did not pass within ${SELF_CHECK_TIMEOUT_S}s \\(GET http://stuck\\.example\\.test:\\d+/\\.well-known/acme-challenge/[\\w-]+: expected status 200, got 404\\): asked the ACME server to validate anyway$`,
        ),
      ),
    ]);
    const c = await waitFor(
      'the failure on the Certificate',
      async () => {
        const x = await getCert(namespace, 'stuck');
        return x.status?.failedIssuanceAttempts === 1 && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(cond(c, 'Issuing')?.message).toMatch(/the ACME server rejected the challenge/);
    await waitFor('solver objects removed', async () => !(await solverObjects(namespace)).length, { timeoutMs: 30_000 });
  });

  // A cluster that cannot reach its own public address (hairpin NAT, split horizon): the self-check
  // never passed, the challenge errored at the timeout and the Certificate waited out an hour of
  // backoff, though the CA would have validated at once.
  it('a self-check the cluster cannot pass but the CA can: past the timeout the CA is asked, and the certificate issues without a failure', async () => {
    const namespace = await ns();
    await issuer(namespace, 'hairpin', pebble);
    standIn.hideFromCluster('hairpin.example.test');
    await cert(namespace, 'hairpin', 'hairpin', ['hairpin.example.test']);
    const c = await waitReady(namespace, 'hairpin', (SELF_CHECK_TIMEOUT_S + 40) * 1000);
    expect(c.status?.failedIssuanceAttempts).toBeUndefined();
    const events = (await admin.list(CoreEvent, { namespace })).items.map((e) => e.reason);
    expect(events).toContain('SelfCheckTimedOut');
    expect(events).toContain('DomainVerified');
  });

  it('waitInsteadOfSelfCheck: no self-check at all, the CA asked after the wait, issued at once', async () => {
    const namespace = await ns();
    await issuer(namespace, 'nocheck', pebble, { ingress: { ingressClassName: 'nginx' }, waitInsteadOfSelfCheck: '1s' });
    standIn.hideFromCluster('nocheck.example.test');
    const started = Date.now();
    await cert(namespace, 'nocheck', 'nocheck', ['nocheck.example.test']);
    await waitReady(namespace, 'nocheck');
    console.log(`waitInsteadOfSelfCheck 1s: issued in ${Date.now() - started} ms`);
    expect(Date.now() - started).toBeLessThan(SELF_CHECK_TIMEOUT_S * 1000);
    const selfChecks = standIn.requests.filter((r) => r.host === 'nocheck.example.test' && r.userAgent.includes('self-check'));
    expect(selfChecks).toEqual([]);
  });

  // ingress-nginx refused every solver Ingress (pathType Exact on a path with dots): the operator
  // threw after making the pod and Service, the Challenge stayed "scheduled", no timeout ran and
  // nothing said why. A solver may ask for a path type; what the cluster refuses is said.
  it('a solver Ingress the cluster refuses: the refusal on the Challenge and the Certificate, and the self-check timeout ends it', async () => {
    const namespace = await ns();
    await issuer(namespace, 'exact', pebble, { ingress: { ingressClassName: 'nginx', pathType: 'Exact' } });
    await cert(namespace, 'refused', 'exact', ['refused.example.test']);
    const shown = await waitFor(
      'the refusal on the Certificate',
      async () => {
        const x = await getCert(namespace, 'refused');
        return /ingress contains invalid paths/.test(cond(x, 'Issuing')?.message ?? '') && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(cond(shown, 'Issuing')?.message).toMatch(/refused\.example\.test: could not create the solver's Ingress: .*ingress contains invalid paths/);
    const failed = await challengeGivenUp(namespace);
    expect(failed.status?.reason).toMatch(new RegExp(`^the solver was not presented within ${SELF_CHECK_TIMEOUT_S}s: could not create the solver's Ingress: `));
  });

  it("solves through a Gateway API HTTPRoute, the solver picked by the Certificate's labels", async () => {
    const namespace = await ns();
    await issuer(namespace, 'gw', pebble, undefined, {
      solvers: [
        { http01: { ingress: { ingressClassName: 'unserved' } } },
        {
          selector: { matchLabels: { exposure: 'gateway' } },
          http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'public', namespace: 'infra', sectionName: 'http' }], labels: { exposure: 'public' } } },
        },
      ],
    });
    const routes = await record(HTTPRoute, namespace);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'routed', namespace, labels: { exposure: 'gateway' } },
      spec: { secretName: 'routed', issuerRef: { name: 'gw' }, dnsNames: ['routed.example.test'] },
    });
    await waitReady(namespace, 'routed');
    await verifyChain(await admin.get(Secret, { namespace, name: 'routed' }), pebble, ['routed.example.test']);
    const route = ([...routes.seen.values()] as (KubeObject & { spec: Record<string, unknown> })[])[0]!;
    expect(route.metadata.labels).toMatchObject({ exposure: 'public', [SOLVER_LABEL]: 'true' });
    expect(route.spec).toMatchObject({
      parentRefs: [{ name: 'public', namespace: 'infra', sectionName: 'http' }],
      hostnames: ['routed.example.test'],
      rules: [{ matches: [{ path: { type: 'Exact', value: expect.stringMatching(/^\/\.well-known\/acme-challenge\//) } }], backendRefs: [{ port: 8089 }] }],
    });
    await waitFor('the HTTPRoute removed', async () => !(await admin.list(HTTPRoute, { namespace })).items.length, { timeoutMs: 30_000 });
    await routes.stop();
  });

  it("solves through the user's own Ingress when named, and leaves it as it was", async () => {
    const namespace = await ns();
    const original = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shop', namespace },
      spec: {
        ingressClassName: 'nginx',
        rules: [
          { host: 'edit.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'shop', port: { number: 80 } } } }] } },
        ],
      },
    };
    await apply(original);
    await issuer(namespace, 'edit', pebble, { ingress: { name: 'shop' } });
    const chs = await record(Challenge.kind, namespace);
    await cert(namespace, 'edited', 'edit', ['edit.example.test']);
    await waitReady(namespace, 'edited');
    // While it was pending the challenge held a finalizer, so the path is always taken out again.
    expect(chs.versions.some((c) => c.metadata.finalizers?.includes('acme.cert.opkit.dev/finalizer'))).toBe(true);
    await waitFor('the challenge gone', async () => !(await challenges(namespace)).length, { timeoutMs: 30_000 });
    const ing = await admin.get(Ingress, { namespace, name: 'shop' });
    expect(ing.spec?.rules).toEqual(original.spec.rules);
    expect((await admin.list(Ingress, { namespace })).items).toHaveLength(1);
    await chs.stop();
  });

  it("ingress-shim with cert-manager's edit-in-place: the annotated Ingress gets its Certificate, solved through itself, and is left as it was", async () => {
    const namespace = await ns();
    // The issuer's solver would make Ingresses of its own class; the Ingress asks to be edited instead.
    await issuer(namespace, 'le', pebble, { ingress: { ingressClassName: 'unserved' } });
    const spec = {
      ingressClassName: 'nginx',
      tls: [{ hosts: ['inplace.example.test'], secretName: 'inplace-tls' }],
      rules: [
        { host: 'inplace.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'shop', port: { number: 80 } } } }] } },
      ],
    };
    await apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'storefront', namespace, annotations: { 'cert-manager.io/issuer': 'le', 'acme.cert-manager.io/http01-edit-in-place': 'true' } },
      spec,
    });
    const chs = await record(Challenge.kind, namespace);
    const c = await waitReady(namespace, 'inplace-tls');
    expect(c.metadata.annotations).toMatchObject({ 'acme.cert.opkit.dev/http01-override-ingress-name': 'storefront' });
    await verifyChain(await admin.get(Secret, { namespace, name: 'inplace-tls' }), pebble, ['inplace.example.test']);
    // The challenge was solved through the annotated Ingress, not through an Ingress of the issuer's class.
    expect(chs.versions.map((x) => x.spec.solver.http01?.ingress)).toContainEqual({ name: 'storefront' });
    await waitFor('the challenge gone', async () => !(await challenges(namespace)).length, { timeoutMs: 30_000 });
    expect((await admin.get(Ingress, { namespace, name: 'storefront' })).spec?.rules).toEqual(spec.rules);
    expect((await admin.list(Ingress, { namespace })).items.map((i) => i.metadata.name)).toEqual(['storefront']);
    await chs.stop();
  });

  it('registers with an external account binding when the CA requires one, and says so when it is missing', async () => {
    const hmac = randomBytes(32).toString('base64url');
    const eab = await startPebble({ httpPort, externalAccountBindings: { 'kid-1': hmac } });
    others.push(eab);
    const namespace = await ns();
    const refused = await issuer(namespace, 'no-eab', eab, undefined, {}, 'False');
    expect(cond(refused, 'Ready')).toMatchObject({
      reason: 'ErrRegisterACMEAccount',
      message: expect.stringMatching(/^Failed to register ACME account: .*'externalAccountBinding'.*externalAccountRequired/),
    });
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'eab', namespace }, stringData: { secret: hmac } });
    const ok = await issuer(namespace, 'with-eab', eab, undefined, { externalAccountBinding: { keyID: 'kid-1', keySecretRef: { name: 'eab' } } });
    expect(cond(ok, 'Ready')?.reason).toBe('ACMEAccountRegistered');
    await cert(namespace, 'bound', 'with-eab', ['bound.example.test']);
    await waitReady(namespace, 'bound');
  });

  it('succeeds against a realistic Pebble: random validation delays and rejected nonces', async () => {
    const realistic = await startPebble({ httpPort, realistic: true });
    others.push(realistic);
    const namespace = await ns();
    await issuer(namespace, 'real', realistic);
    const started = Date.now();
    const names = ['a.real.example.test', 'b.real.example.test'];
    await cert(namespace, 'real', 'real', names);
    await waitReady(namespace, 'real', 120_000);
    console.log(`realistic Pebble: issued in ${Date.now() - started} ms`);
    await verifyChain(await admin.get(Secret, { namespace, name: 'real' }), realistic, names);
  });

  it("a request made again under the same name and CSR gets an Order of its own, not the old request's failed one", async () => {
    const namespace = await ns();
    // Solver Ingresses no ingress controller serves: the order stays pending while this runs.
    await issuer(namespace, 'slow', pebble, { ingress: { ingressClassName: 'unserved' } });
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const request = Buffer.from(await createCSR({ secretName: 'x', issuerRef: { name: 'slow' }, dnsNames: ['again.example.test'] }, key)).toString('base64');
    const cr = {
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'CertificateRequest',
      metadata: { name: 'again', namespace },
      spec: { request, issuerRef: { name: 'slow' } },
    };
    await apply(cr);
    const first = await waitFor("the first request's Order", async () => (await admin.list(Order.kind, { namespace })).items[0], { timeoutMs: 30_000 });
    // The request is deleted and its Order orphaned, step by step as `kubectl delete --cascade=orphan`
    // has the garbage collector do it (the request held by a finalizer while its Order loses the
    // owner reference, then released). By hand, because the collector orphans only kinds it has
    // discovered, which a new CRD's may not be yet. Then the Order fails.
    const hold = (op: 'add' | 'remove') =>
      plane.kubectl([
        'patch',
        'certificaterequest',
        'again',
        '-n',
        namespace,
        '--type=json',
        '-p',
        JSON.stringify(op === 'add' ? [{ op, path: '/metadata/finalizers', value: ['test.opkit.dev/hold'] }] : [{ op, path: '/metadata/finalizers' }]),
      ]);
    await hold('add');
    await plane.kubectl(['delete', 'certificaterequest', 'again', '-n', namespace, '--wait=false']);
    await plane.kubectl([
      'patch',
      'order',
      first.metadata.name!,
      '-n',
      namespace,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: '/metadata/ownerReferences' }]),
    ]);
    await hold('remove');
    await waitFor('the old request gone', async () => (await admin.list(CertificateRequest.kind, { namespace })).items.length === 0);
    await plane.kubectl([
      'patch',
      'order',
      first.metadata.name!,
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { state: 'errored', reason: "the old request's order failed" } }),
    ]);

    await apply(cr);
    const again = await admin.get(CertificateRequest.kind, { namespace, name: 'again' });
    const replaced = await waitFor(
      'an Order owned by the new request',
      async () => {
        const [o] = (await admin.list(Order.kind, { namespace })).items;
        return o?.metadata.ownerReferences?.[0]?.uid === again.metadata.uid && o;
      },
      { timeoutMs: 30_000 },
    );
    expect(replaced.metadata.name).toBe(first.metadata.name);
    expect(replaced.status?.state ?? 'pending').toBe('pending');
    const now = await admin.get(CertificateRequest.kind, { namespace, name: 'again' });
    expect(cond(now, 'Ready')).toMatchObject({ status: 'False', reason: 'Pending' });
    const events = (await admin.list(CoreEvent, { namespace, fieldSelector: 'involvedObject.kind=CertificateRequest,reason=OrderReplaced' })).items;
    expect(events.map((e) => e.message)).toEqual([`Order ${namespace}/${first.metadata.name} belonged to another CertificateRequest; ordering anew`]);
  });

  it('an order the CA no longer knows (404) is ordered again after a growing backoff, and the certificate is issued', async () => {
    const namespace = await ns();
    await issuer(namespace, 'le', pebble);
    await cert(namespace, 'lost', 'le', ['lost.example.test']);
    const orders = async () => (await admin.list(Order.kind, { namespace })).items;
    /** The CA forgets the order: its URLs now name an order Pebble does not have, every authorization already won. */
    const forget = async () => {
      const o = await waitFor(
        'an order at the CA',
        async () => {
          const [x] = await orders();
          return x?.status?.url ? x : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      const gone = (u: string) => `${u}0000`;
      const authorizations = o.status!.authorizations!.map((a) => ({ ...a, initialState: 'valid' }));
      await plane.kubectl([
        'patch',
        'order',
        o.metadata.name!,
        '-n',
        namespace,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { url: gone(o.status!.url!), finalizeURL: gone(o.status!.finalizeURL!), authorizations } }),
      ]);
      return o.metadata.name!;
    };
    const failure = (attempts: number) =>
      waitFor(
        `failed attempt ${attempts} recorded`,
        async () => {
          const [x] = await orders();
          return x?.status?.failedAttempts === attempts && !x.status.url && x;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
    const retryIn = (o: { status?: { reason?: string; lastFailureTime?: string } }) => {
      const at = /retrying at (\S+)$/.exec(o.status?.reason ?? '')?.[1];
      // lastFailureTime is RFC 3339 to the second; the retry time to the millisecond.
      return Math.floor((Date.parse(at!) - Date.parse(o.status!.lastFailureTime!)) / 1000);
    };

    await forget();
    const once = await failure(1);
    expect(once.status?.reason).toMatch(/^the ACME server lost the order \(.*\); ordering again; retrying at /);
    expect(retryIn(once)).toBe(30);
    // Ordered again only once the backoff has passed; lost again: the next wait is twice as long.
    await forget();
    const twice = await failure(2);
    expect(Date.parse(twice.status!.lastFailureTime!) - Date.parse(once.status!.lastFailureTime!)).toBeGreaterThanOrEqual(29_000);
    expect(retryIn(twice)).toBe(60);
    const c = await waitReady(namespace, 'lost', 120_000);
    expect(c.status?.revision).toBe(1);
    const done = (await orders())[0]!;
    expect(done.status).toMatchObject({ state: 'valid' });
    expect(done.status?.failedAttempts).toBeUndefined();
  }, 180_000);

  it('an unreachable ACME server is asked at most 3 times in 3 minutes, also across an operator restart; the reason is on the Issuer', async () => {
    // A server that takes each connection and drops it: every attempt is counted here.
    let connections = 0;
    const server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/dir`;
    try {
      const namespace = await ns();
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Issuer',
        metadata: { name: 'gone', namespace },
        spec: { acme: { server: url, email: 'ops@example.test', privateKeySecretRef: { name: 'gone-account' }, solvers: [{ http01: { ingress: {} } }] } },
      });
      const started = Date.now();
      const failing = await waitFor(
        'the Issuer says why',
        async () => {
          const i = await admin.get(Issuer.kind, { namespace, name: 'gone' });
          return cond(i, 'Ready')?.reason === 'ErrRegisterACMEAccount' && i;
        },
        { timeoutMs: 20_000 },
      );
      expect(cond(failing, 'Ready')?.message).toMatch(/unreachable: ECONNRESET.*retrying at/);
      await new Promise((r) => setTimeout(r, 60_000 - (Date.now() - started)));
      // The operator restarts (a new pod): what it knew about the failures is in the status.
      await restartManager();
      await new Promise((r) => setTimeout(r, 180_000 - (Date.now() - started)));
      const events = (await admin.list(CoreEvent, { namespace, fieldSelector: 'involvedObject.name=gone,reason=ErrRegisterACMEAccount' })).items;
      console.log(`unreachable ACME server: ${connections} connections in 3 min, ${events.reduce((n, e) => n + (e.count ?? 1), 0)} events`);
      expect(connections).toBeGreaterThanOrEqual(2);
      expect(connections).toBeLessThanOrEqual(3);
    } finally {
      server.close();
    }
  }, 240_000);

  it('with the ACME server down, says so on the Certificate, and recovers when it returns (re-registering the forgotten account)', async () => {
    const flaky = await startPebble({ httpPort });
    others.push(flaky);
    const namespace = await ns();
    const before = await issuer(namespace, 'flaky', flaky);
    await flaky.stopAcme();
    await cert(namespace, 'outage', 'flaky', ['outage.example.test']);
    const down = await waitFor(
      'the outage shown on the Certificate',
      async () => {
        const x = await getCert(namespace, 'outage');
        return /unreachable/.test(cond(x, 'Issuing')?.message ?? '') && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(cond(down, 'Issuing')?.message).toMatch(
      new RegExp(`ACME server ${flaky.directoryUrl.replace(/[/.]/g, '\\$&')} is unreachable: ECONNREFUSED .*; retrying at \\S+`),
    );

    // Pebble comes back knowing nothing: the account and any order are gone.
    await flaky.startAcme();
    const c = await waitReady(namespace, 'outage', 120_000);
    await verifyChain(await admin.get(Secret, { namespace, name: 'outage' }), flaky, ['outage.example.test']);
    expect(c.status?.failedIssuanceAttempts ?? 0).toBe(0);
    const after = await admin.get(Issuer.kind, { namespace, name: 'flaky' });
    expect(cond(after, 'Ready')?.status).toBe('True');
    const lost = (await admin.list(CoreEvent, { namespace, fieldSelector: 'involvedObject.kind=Issuer,reason=ACMEAccountLost' })).items;
    expect(lost.length).toBeGreaterThanOrEqual(1);
    expect(before.status?.acme?.uri).toBeDefined();
  });
});
