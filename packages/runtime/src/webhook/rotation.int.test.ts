import { waitFor } from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock/clock.js';
import { Client } from '../client/client.js';
import {
  ClusterRole,
  ClusterRoleBinding,
  ConfigMap,
  Namespace,
  Role,
  RoleBinding,
  Secret,
  ServiceAccount,
  ValidatingWebhookConfiguration,
} from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { silentLogger } from '../log/logger.js';
import { untilAuthorizerSays } from '../testing/authorizer.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { admissionReview } from './admission.js';
import { WebhookServer } from './server.js';
import { ServingCertificates } from './serving-certificates.js';
import { pemCertificates } from './self-signed.js';

const day = 86_400_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The certificate a TLS server presents. */
const presented = (port: number) =>
  new Promise<X509Certificate>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(new X509Certificate(s.getPeerCertificate().raw));
      s.end();
    });
    s.on('error', reject);
  });

/**
 * The runtime's webhook CA rotates at two thirds of its life. The API server must trust the new CA
 * before any replica serves a certificate it signed: while the injection has not reached every
 * webhook configuration (here: it is refused for a while, as a chart upgrade or a missing verb
 * would refuse it), the old serving certificate keeps serving, and no call fails.
 */
describe('webhook CA rotation under load', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    for (const name of ['ops', 'guarded']) await admin.create(Namespace, { metadata: { name, labels: { rotation: name } } });
    await admin.create(ServiceAccount, { metadata: { namespace: 'ops', name: 'keeper' } });
    await admin.create(Role, {
      metadata: { namespace: 'ops', name: 'keeper' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update'] }],
    });
    await admin.create(RoleBinding, {
      metadata: { namespace: 'ops', name: 'keeper' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'keeper' },
      subjects: [{ kind: 'ServiceAccount', namespace: 'ops', name: 'keeper' }],
    });
    await admin.create(ClusterRole, { metadata: { name: 'keeper' }, rules: injectRules(['get', 'list', 'watch', 'update']) });
    await admin.create(ClusterRoleBinding, {
      metadata: { name: 'keeper' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'keeper' },
      subjects: [{ kind: 'ServiceAccount', namespace: 'ops', name: 'keeper' }],
    });
  });
  const injectRules = (verbs: string[]) => [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], verbs }];

  it('serves a certificate from the new CA only once the API server trusts it: no call fails across the rotation', async () => {
    const realNow = Date.now();
    // Started 250 days ago, so every certificate issued on the way is valid in real time: the API server checks them.
    const clock = new FakeClock(realNow - 250 * day);
    const { kubeConfig } = await suite.plane.serviceAccountCredentials('ops', 'keeper');
    const transport = new Transport(kubeConfig);
    const client = new Client(transport, { fieldManager: 'keeper' });
    const server = new WebhookServer({ host: '127.0.0.1', port: 0 }, silentLogger());
    server.route('/validate', (body) => admissionReview({ uid: (body as { request: { uid: string } }).request.uid, allowed: true }));
    const certs = new ServingCertificates(client, transport, silentLogger(), {
      secret: { namespace: 'ops', name: 'keeper-tls' },
      hosts: ['127.0.0.1'],
      inject: { validating: ['rotation-test'] },
      clock,
      lifetimes: { caMs: 365 * day, servingMs: 400 * day },
    });
    certs.onCertificate((p) => server.setCertificate(p));
    certs.start();
    await server.start();
    await suite.admin.create(ValidatingWebhookConfiguration, {
      metadata: { name: 'rotation-test' },
      webhooks: [
        {
          name: 'allow.rotation.test.opkit.dev',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
          clientConfig: { url: `https://127.0.0.1:${server.port}/validate` },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { rotation: 'guarded' } },
        },
      ],
    } as never);
    const stop = new AbortController();
    const keeping = certs.keep(stop.signal);
    const secretCas = async () =>
      pemCertificates(Buffer.from((await suite.admin.get(Secret, { namespace: 'ops', name: 'keeper-tls' })).data!['ca.crt']!, 'base64').toString()).map(
        (p) => new X509Certificate(p),
      );
    let calls = 0;
    const failures: string[] = [];
    let load: Promise<void> | undefined;
    let loading = true;
    try {
      await waitFor(
        'the CA injected and a certificate served',
        async () => server.ready && !!(await suite.admin.get(ValidatingWebhookConfiguration, { name: 'rotation-test' })).webhooks?.[0]?.clientConfig.caBundle,
        { timeoutMs: 20_000 },
      );
      const [firstCa] = await secretCas();
      // Calls through the API server, one after another, for the whole rotation.
      load = (async () => {
        for (let i = 0; loading; i++) {
          try {
            await suite.admin.create(ConfigMap, { metadata: { namespace: 'guarded', name: `c${i}` } });
            calls++;
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
      })();
      await waitFor('calls to succeed', () => calls >= 5, { timeoutMs: 20_000 });

      // The injection is refused for a while; the clock passes two thirds of the CA's year.
      await suite.admin.patch(ClusterRole, { name: 'keeper' }, { rules: injectRules(['get', 'list', 'watch']) });
      await untilAuthorizerSays(
        suite.admin,
        { user: 'system:serviceaccount:ops:keeper', verb: 'update', group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' },
        false,
      );
      clock.advance(250 * day + 60_000);
      await waitFor('a second CA in the Secret', async () => (await secretCas()).length === 2, { timeoutMs: 20_000 });
      const during = calls;
      await sleep(5_000);
      expect(calls - during).toBeGreaterThan(5);
      expect((await presented(server.port!)).checkIssued(firstCa!)).toBe(true);

      // Injection allowed again: the API server learns the new CA, and only then is a certificate from it served.
      await suite.admin.patch(ClusterRole, { name: 'keeper' }, { rules: injectRules(['get', 'list', 'watch', 'update']) });
      const [newCa] = await secretCas();
      // The keeper retries the refused injection with a backoff on its (fake) clock: move it along.
      await waitFor('a certificate from the new CA served', async () => (clock.advance(10_000), (await presented(server.port!)).checkIssued(newCa!)), {
        timeoutMs: 30_000,
      });
      const switched = calls;
      await waitFor('calls to go on succeeding', () => calls >= switched + 5, { timeoutMs: 20_000 });
      loading = false;
      await load;
      console.log(`${calls} calls through the API server across the rotation, ${failures.length} failed`);
      expect(failures).toEqual([]);
    } finally {
      loading = false;
      stop.abort();
      await load;
      await keeping;
      await server.stop();
      await certs.stop();
      transport.close();
    }
  });
});
