import { Client, CustomResourceDefinition, issueCa, issueServing, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { createServer, type Server } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Issuer, Order } = CERT_APIS.opkit;

const RETRY_AFTER_S = 3_600;

/**
 * An ACME server that registers accounts and then refuses every new order with 429 and
 * `Retry-After: 3600`, as Let's Encrypt does past its rate limits. It counts the orders asked for.
 */
async function rateLimitingAcmeServer(): Promise<{ directory: string; caPem: string; newOrders: () => number; stop(): Promise<void> }> {
  const now = Date.now();
  const ca = issueCa('rate-limiting acme', now - 60_000, now + 86_400_000);
  const leaf = issueServing(ca, ['127.0.0.1'], now - 60_000, now + 86_400_000);
  let nonce = 0;
  let orders = 0;
  const srv: Server = createServer({ cert: leaf.cert, key: leaf.key }, (req, res) => {
    const base = `https://127.0.0.1:${(srv.address() as { port: number }).port}`;
    const headers = { 'replay-nonce': `nonce-${++nonce}`, 'content-type': 'application/json' };
    req.resume();
    req.on('end', () => {
      switch (req.url) {
        case '/directory':
          res.writeHead(200, headers);
          return void res.end(JSON.stringify({ newNonce: `${base}/nonce`, newAccount: `${base}/account`, newOrder: `${base}/order` }));
        case '/nonce':
          res.writeHead(200, headers);
          return void res.end();
        case '/account':
          res.writeHead(201, { ...headers, location: `${base}/account/1` });
          return void res.end(JSON.stringify({ status: 'valid', contact: [] }));
        case '/account/1':
          res.writeHead(200, headers);
          return void res.end(JSON.stringify({ status: 'valid', contact: [] }));
        case '/order':
          orders++;
          res.writeHead(429, { ...headers, 'content-type': 'application/problem+json', 'retry-after': String(RETRY_AFTER_S) });
          return void res.end(JSON.stringify({ type: 'urn:ietf:params:acme:error:rateLimited', detail: 'too many new orders recently', status: 429 }));
        default:
          res.writeHead(404, headers);
          return void res.end();
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    directory: `https://127.0.0.1:${(srv.address() as { port: number }).port}/directory`,
    caPem: ca.cert,
    newOrders: () => orders,
    stop: async () => {
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    },
  };
}

/**
 * A server's Retry-After was only the next requeue: the operator's own status write reconciled the
 * Order again and the 30 s backoff let it through, so a 429 with Retry-After: 3600 was retried after
 * 30 s, 90 s, 210 s. It is kept in the Order's status (retryAt) now; here the Order is reconciled
 * again and again, and the operator restarted, and the CA is asked once.
 */
describe("an ACME server's Retry-After, obeyed across requeues and a restart", () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  let acme: Awaited<ReturnType<typeof rateLimitingAcmeServer>>;
  const NS = 'limited';
  const start = async () => {
    const m = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(m, defaultConfig({ clusterResourceNamespace: 'opkit-system' }));
    await m.start();
    return m;
  };

  beforeAll(async () => {
    acme = await rateLimitingAcmeServer();
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Order.kind).then(() => true));
    for (const name of ['opkit-system', NS]) await plane.kubectl(['create', 'namespace', name]);
    manager = await start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
    await acme?.stop();
  });

  it('asks for the order once in the hour it was told to wait, whatever reconciles it and after a restart; the time is on the Order', async () => {
    const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'limited', namespace: NS },
      spec: {
        acme: {
          server: acme.directory,
          caBundle: Buffer.from(acme.caPem).toString('base64'),
          privateKeySecretRef: { name: 'limited-account' },
          solvers: [{ http01: { ingress: {} } }],
        },
      },
    });
    await waitFor(
      'the Issuer Ready',
      async () => (await admin.get(Issuer.kind, { namespace: NS, name: 'limited' })).status?.conditions?.[0]?.status === 'True',
    ).catch(async (e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify((await admin.get(Issuer.kind, { namespace: NS, name: 'limited' })).status)}`);
    });
    const asked = Date.now();
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace: NS },
      spec: { secretName: 'web', issuerRef: { name: 'limited' }, dnsNames: ['web.example.test'] },
    });
    const limited = await waitFor('the Order rate limited', async () => {
      const [o] = (await admin.list(Order.kind, { namespace: NS })).items;
      return o?.status?.retryAt ? o : undefined;
    });
    expect(acme.newOrders()).toBe(1);
    const retryAt = Date.parse(limited.status!.retryAt!);
    expect(retryAt - asked).toBeGreaterThan((RETRY_AFTER_S - 60) * 1000);
    expect(retryAt - Date.now()).toBeLessThanOrEqual(RETRY_AFTER_S * 1000);
    expect(limited.status?.reason).toMatch(/too many new orders recently/);

    // Reconciled again and again (a label touched each second), for longer than the 30 s backoff.
    for (let i = 0; i < 35; i++) {
      await plane.kubectl(['label', '--overwrite', 'order.acme.cert.opkit.dev', limited.metadata.name!, '-n', NS, `touched=${i}`]);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(acme.newOrders()).toBe(1);

    // Restarted: the new process reads the wait from status, and does not ask.
    await manager?.stop();
    manager = await start();
    await new Promise((r) => setTimeout(r, 5_000));
    await plane.kubectl(['label', '--overwrite', 'order.acme.cert.opkit.dev', limited.metadata.name!, '-n', NS, 'touched=after-restart']);
    await new Promise((r) => setTimeout(r, 5_000));
    expect(acme.newOrders()).toBe(1);
    const after = (await admin.list(Order.kind, { namespace: NS })).items[0]!;
    expect(after.status?.retryAt).toBe(limited.status?.retryAt);
  }, 120_000);
});
