import { Client, CustomResourceDefinition, issueCa, issueServing, Transport, type Manager } from '@opkit/runtime';
import { metricValue, scrape, testManager } from '@opkit/runtime/testing';
import { startControlPlane, startPebble, udpAndTcpOnOnePort, waitFor, type ControlPlane, type Pebble } from '@opkit/testing';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SANS } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { CLASS, decodeMessage, encodeMessage, encodeName, TYPE } from '../dns/message.js';
import { CUSTOM_RESOURCES } from '../manifests/generate.js';
import { addCertificateControllers } from './index.js';
import { CERT_APIS } from '../api/index.js';

const { Certificate, CertificateRequest, Challenge, Issuer } = CERT_APIS.opkit;

const OPERATOR = 'cert-operator';
const SYSTEM = 'opkit-system';
/**
 * What a victim may wait for a certificate while another tenant attacks, and the event-loop lag
 * allowed. Measured: victim issuance median 183 ms, worst 294 ms; lag worst 57 to 69 ms (p99 14 ms);
 * with 4,000-name certificates allowed, the lag was 456 to 548 ms. The worst sample also counts time
 * the process was not scheduled at all: run alone 75 to 141 ms (2026-11-26), but 328 ms in the full
 * `npm test`, where other test files run their own API servers and cert-manager on the same 2
 * cores (p99 still 40 ms). The bound sits between that and the regression it guards against.
 */
const VICTIM_ISSUANCE_BOUND_MS = 5_000;
const LAG_BOUND_MS = 420;
/** How long everything the attacker starts may take to be reported on the attacker's own objects. */
const REPORT_BOUND_MS = 90_000;

type Cond = { type: string; status: string; reason?: string; message?: string };
const cond = (o: { status?: { conditions?: Cond[] } }, type: string) => o.status?.conditions?.find((c) => c.type === type);

/**
 * An ACME "server" a tenant runs: each path prefix misbehaves in its own way. Every answer is on
 * TLS the Issuer's caBundle trusts, so only the misbehaviour stops the operator.
 */
async function hostileAcmeServer(): Promise<{ url: (mode: string) => string; caPem: string; stop(): Promise<void> }> {
  const now = Date.now();
  const ca = issueCa('hostile acme', now - 60_000, now + 86_400_000);
  const leaf = issueServing(ca, ['127.0.0.1'], now - 60_000, now + 86_400_000);
  const timers = new Set<NodeJS.Timeout>();
  const srv: HttpsServer = createHttpsServer({ cert: leaf.cert, key: leaf.key }, (req, res) => {
    const mode = req.url!.split('/')[1];
    req.on('error', () => {});
    res.on('error', () => {});
    switch (mode) {
      case 'slow': {
        // A JSON directory, one byte every 500 ms: never idle, never done.
        res.writeHead(200, { 'content-type': 'application/json' });
        const t = setInterval(() => res.write(' '), 500);
        timers.add(t);
        return;
      }
      case 'endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"newNonce":"');
        const t = setInterval(() => res.write('a'.repeat(64 * 1024)), 5);
        timers.add(t);
        return;
      }
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(512 * 1024 * 1024) });
        return void res.write('{');
      case 'malformed':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"newNonce": 5, "newAccount": ["x"], "newOrder": {"a": null}}');
      case 'loop':
        res.writeHead(302, { location: `https://127.0.0.1:${(srv.address() as { port: number }).port}/loop/directory` });
        return void res.end();
      default:
        res.writeHead(404);
        res.end();
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return {
    url: (mode) => `https://127.0.0.1:${port}/${mode}/directory`,
    caPem: ca.cert,
    stop: async () => {
      timers.forEach(clearInterval);
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    },
  };
}

/**
 * A DNS server a tenant runs, named as its Issuer's RFC 2136 nameserver: over UDP it answers every
 * query with an SOA (so the zone is found), and over TCP, where updates go, it drips its answer a
 * byte a second, then sends garbage.
 */
async function hostileDnsServer(): Promise<{ server: string; updates: () => number; stop(): Promise<void> }> {
  let updates = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const { udp, tcp, port } = await udpAndTcpOnOnePort((c) => {
    sockets.add(c);
    c.on('error', () => {});
    c.on('close', () => sockets.delete(c));
    c.once('data', () => {
      updates++;
      const garbage = Buffer.concat([Buffer.from([0x40, 0x00]), randomBytes(0x4000)]);
      let i = 0;
      const t = setInterval(() => (c.writable && i < garbage.length ? c.write(garbage.subarray(i, ++i)) : clearInterval(t)), 1_000);
      timers.add(t);
    });
  });
  udp.on('message', (msg, from) => {
    try {
      const q = decodeMessage(msg);
      const question = q.questions[0]!;
      const soa = Buffer.concat([encodeName('ns.attacker.test'), encodeName('root.attacker.test'), Buffer.alloc(20, 1)]);
      const answer = encodeMessage({
        id: q.id,
        flags: 0x8580,
        questions: q.questions,
        answers: [{ name: 'attacker.test', type: TYPE.SOA, class: CLASS.IN, ttl: 60, data: soa }],
        authorities: [],
        additionals: [],
      });
      udp.send(question.type === TYPE.SOA ? answer : randomBytes(40), from.port, from.address);
    } catch {
      // not DNS: nothing to answer
    }
  });
  return {
    server: `127.0.0.1:${port}`,
    updates: () => updates,
    stop: async () => {
      timers.forEach(clearInterval);
      sockets.forEach((s) => s.destroy());
      udp.close();
      await new Promise((r) => tcp.close(r));
    },
  };
}

/**
 * One operator serves every namespace. A tenant who may create Issuers, Certificates and
 * CertificateRequests in their own namespace points them at servers they run and feeds them
 * crafted input. Everything the tenant starts must end within a bound and be reported on the
 * tenant's own objects, while another namespace's certificates keep issuing on time.
 */
describe('a hostile tenant and the cert operator every namespace shares', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let pebble: Pebble;
  let acme: Awaited<ReturnType<typeof hostileAcmeServer>>;
  let dns: Awaited<ReturnType<typeof hostileDnsServer>>;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });

  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 1 });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    for (const ns of [SYSTEM, 'victim', 'attacker']) await plane.kubectl(['create', 'namespace', ns]);
    pebble = await startPebble({});
    acme = await hostileAcmeServer();
    dns = await hostileDnsServer();
    manager = testManager(plane.kubeConfig, { name: OPERATOR }).manager;
    addCertificateControllers(
      manager,
      defaultConfig({ clusterResourceNamespace: SYSTEM, dns01: { recursiveNameservers: [dns.server], recursiveOnly: true, checkIntervalMs: 1_000 } }),
    );
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await acme?.stop();
    await dns?.stop();
    await pebble?.stop();
    await plane?.stop();
  });

  it("bounds and reports everything the attacker starts, while the victim's certificates keep issuing on time", async () => {
    // The victim: SelfSigned → CA → leaves, as any namespace.
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: 'victim' }, spec: { selfSigned: {} } });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'root', namespace: 'victim' },
      spec: { isCA: true, commonName: 'victim root', secretName: 'root', issuerRef: { name: 'selfsigned' }, privateKey: { algorithm: 'ECDSA' } },
    });
    await waitFor('the victim root', async () => cond(await admin.get(Certificate.kind, { namespace: 'victim', name: 'root' }), 'Ready')?.status === 'True');
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'victim' }, spec: { ca: { secretName: 'root' } } });
    await waitFor('the victim CA issuer', async () => cond(await admin.get(Issuer.kind, { namespace: 'victim', name: 'ca' }), 'Ready')?.status === 'True');

    // The attack, all at once.
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const attackStarted = performance.now();
    const modes = ['slow', 'endless', 'huge', 'malformed', 'loop'];
    for (const mode of modes) {
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Issuer',
        metadata: { name: mode, namespace: 'attacker' },
        spec: {
          acme: {
            server: acme.url(mode),
            caBundle: Buffer.from(acme.caPem).toString('base64'),
            privateKeySecretRef: { name: `${mode}-account` },
            solvers: [{ http01: { ingress: {} } }],
          },
        },
      });
    }
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'dns', namespace: 'attacker' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: 'dns-account' },
          solvers: [{ dns01: { rfc2136: { nameserver: dns.server } } }],
        },
      },
    });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'wild', namespace: 'attacker' },
      spec: { secretName: 'wild', issuerRef: { name: 'dns' }, dnsNames: ['*.attacker.test'] },
    });
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: 'attacker' }, spec: { selfSigned: {} } });
    // A CSR that is not one: DER-looking bytes that lie about their lengths.
    const crafted = Buffer.concat([Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x30, 0x82]), randomBytes(2_000)]);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'CertificateRequest',
      metadata: { name: 'crafted', namespace: 'attacker' },
      spec: {
        issuerRef: { name: 'selfsigned' },
        request: Buffer.from(`-----BEGIN CERTIFICATE REQUEST-----\n${crafted.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`).toString('base64'),
      },
    });
    // 4,000 names (240 KB) stalled the operator's event loop for half a second per issuance: the
    // API server refuses more than MAX_SANS, and the most it takes is issued.
    const names = (n: number) => Array.from({ length: n }, (_, i) => `host-${String(i).padStart(4, '0')}.${'x'.repeat(40)}.attacker.test`);
    const refused = await admin
      .create(Certificate.kind, {
        metadata: { name: 'too-many', namespace: 'attacker' },
        spec: { secretName: 'too-many', issuerRef: { name: 'selfsigned' }, dnsNames: names(4_000) },
      } as never)
      .catch((e: Error) => e);
    expect((refused as Error).message).toMatch(new RegExp(`must have at most ${MAX_SANS} items`));
    await admin.create(Certificate.kind, {
      metadata: { name: 'many', namespace: 'attacker' },
      spec: { secretName: 'many', issuerRef: { name: 'selfsigned' }, dnsNames: names(MAX_SANS) },
    } as never);

    // Meanwhile the victim asks for a certificate every 2 s, for a minute.
    const latencies: number[] = [];
    const victims: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      const name = `v-${i}`;
      const t0 = performance.now();
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Certificate',
        metadata: { name, namespace: 'victim' },
        spec: { secretName: name, issuerRef: { name: 'ca' }, dnsNames: [`${name}.victim.test`], privateKey: { algorithm: 'ECDSA' } },
      });
      victims.push(
        waitFor(`victim ${name} Ready`, async () => cond(await admin.get(Certificate.kind, { namespace: 'victim', name }), 'Ready')?.status === 'True', {
          timeoutMs: 60_000,
          intervalMs: 100,
        }).then(() => {
          latencies.push(performance.now() - t0);
        }),
      );
      await new Promise((r) => setTimeout(r, 2_000));
    }
    await Promise.all(victims);

    // Everything the attacker started is reported on the attacker's own objects.
    const reported = async (kind: 'issuer' | 'cr' | 'cert' | 'challenge', name: string) => {
      if (kind === 'issuer') {
        const c = cond(await admin.get(Issuer.kind, { namespace: 'attacker', name }), 'Ready');
        return c?.status === 'False' && c.message ? c : false;
      }
      if (kind === 'cr') {
        const c = cond(await admin.get(CertificateRequest.kind, { namespace: 'attacker', name }), 'Ready');
        return c?.status === 'False' && c.reason === 'Failed' ? c : false;
      }
      if (kind === 'challenge') {
        const [ch] = (await admin.list(Challenge.kind, { namespace: 'attacker' })).items;
        // Past "scheduled": the update's failure, in the Challenge's own words.
        return ch?.status?.reason && ch.status.reason !== 'scheduled'
          ? { type: 'Challenge', status: String(ch.status.state), message: ch.status.reason }
          : false;
      }
      const c = cond(await admin.get(Certificate.kind, { namespace: 'attacker', name }), 'Ready');
      return c?.status === 'True' || (c?.status === 'False' && /fail|too|large|invalid|exceed/i.test(c.message ?? '')) ? c : false;
    };
    const outcomes: Record<string, Cond> = {};
    for (const [kind, name] of [
      ...modes.map((m) => ['issuer', m] as const),
      ['cr', 'crafted'] as const,
      ['challenge', 'wild'] as const,
      ['cert', 'many'] as const,
    ]) {
      outcomes[name] = await waitFor(`the attacker's ${name} reported`, () => reported(kind, name), {
        timeoutMs: Math.max(1_000, REPORT_BOUND_MS - (performance.now() - attackStarted)),
        intervalMs: 500,
      });
    }
    lag.disable();
    const metrics = (await scrape(manager, '/metrics')).body;
    const worst = Math.max(...latencies);
    console.log(
      `victim issuance under attack: ${latencies.length} certificates, median ${Math.round(latencies.sort((a, b) => a - b)[latencies.length >> 1]!)} ms, worst ${Math.round(worst)} ms; ` +
        `event-loop lag worst ${Math.round(lag.max / 1e6)} ms, p99 ${Math.round(lag.percentile(99) / 1e6)} ms (nodejs_eventloop_lag_seconds now ${metricValue(metrics, 'nodejs_eventloop_lag_seconds')}); DNS updates tried ${dns.updates()}\n` +
        Object.entries(outcomes)
          .map(([n, c]) => `  ${n}: ${c.status} ${c.reason ?? ''} ${c.message?.slice(0, 160)}`)
          .join('\n'),
    );
    expect(worst).toBeLessThan(VICTIM_ISSUANCE_BOUND_MS);
    expect(lag.max / 1e6).toBeLessThan(LAG_BOUND_MS);
    // Each in words that say what the server did.
    expect(outcomes['slow']!.message).toMatch(/no complete answer within 30 s/);
    // Content-Length: 512 MiB, then one byte: nothing more ever comes, so it is the deadline.
    expect(outcomes['huge']!.message).toMatch(/no complete answer within 30 s/);
    expect(outcomes['endless']!.message).toMatch(/the answer is larger than 1 MiB/);
    expect(outcomes['malformed']!.message).toMatch(/not ACME/);
    expect(outcomes['loop']!.message).toMatch(/more than 2 redirects/);
    expect(outcomes['crafted']!.message).toMatch(/not a PEM certificate signing request/);
    expect(outcomes['wild']!.message).toMatch(/no answer from 127.0.0.1:\d+ within \d+ ms \(TCP\)/);
    // The operator is still up: its probes answer.
    expect((await scrape(manager, '/healthz')).status).toBe(200);
  }, 300_000);
});
