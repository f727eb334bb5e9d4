import { Client, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import {
  certManagerToolset,
  createCertificateAuthority,
  kubectlApply,
  startCertManager,
  startControlPlane,
  waitFor,
  waitForQuiet,
  CERT_MANAGER_CA_CONTROLLERS,
  cmctlRenewConditions,
  type AuditEvent,
  type ControlPlane,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../config.js';
import { CUSTOM_RESOURCES } from '../manifests/generate.js';
import { CertManagerCertificate } from './certificates/cert-manager-owner.js';
import { addCertificateControllers } from './index.js';
import { CERT_APIS } from '../api/index.js';

const { Certificate } = CERT_APIS.opkit;

/**
 * A migration as it happens: cert-manager's controller (v1.21, built from its Go module) and this
 * operator on one API server, both with their ingress-shim on, and one Ingress annotated
 * `cert-manager.io/issuer` that both read. Each shim makes a Certificate named after the TLS
 * Secret, in its own API group, for the same Secret. Before, the two re-issued over each other at
 * every renewal until the CA's duplicate limit stopped both. Now cert-manager's Certificate keeps
 * the Secret and ours says so (SecretOwnedByCertManager), whichever side is forced to renew; every
 * CertificateRequest either side makes is counted from the API server's audit log, against the
 * bounds stated below.
 *
 * Run in both orders, each made certain (started together, who issues first is a race, and each
 * outcome has its own path): cert-manager first, and ours stands back at once; opkit first, and
 * cert-manager adopts our certificate (a Secret without its issuer annotations is accepted as its
 * own; it only adds its detail annotations) and both are Ready until cert-manager renews.
 */
const NS = 'apps';
const SECRET = 'web-tls';
/** How long a quiet spell must last to count as settled (both sides write within a second of an event). */
const QUIET_MS = 15_000;

type Order = 'cert-manager first' | 'opkit first';

describe.each<Order>(['cert-manager first', 'opkit first'])(
  'beside cert-manager: both controllers and both ingress-shims on one API server, one Ingress, %s',
  (order) => {
    let plane: ControlPlane;
    let admin: Client;
    let manager: Manager | undefined;
    let certManager: { stop(): Promise<void>; recentOutput(lines?: number): string } | undefined;
    let startCertManagerController: () => void;
    const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });

    /**
     * CertificateRequests created and writes of the Secret since `since`, per API group's controller.
     * Only what the API server accepted: cert-manager names a request `<certificate>-<revision>`, so a
     * create from a stale cache is refused (409) and creates nothing.
     */
    function counts(since: Date) {
      const writes = plane.audit!.writes({ since }).filter((e) => (e.responseStatus?.code ?? 0) < 300);
      const created = (group: string) =>
        writes.filter(
          (e) => e.verb === 'create' && e.objectRef?.resource === 'certificaterequests' && e.objectRef.apiGroup === group && e.objectRef.namespace === NS,
        ).length;
      const secretWrites = (byOpkit: boolean) =>
        writes.filter(
          (e: AuditEvent) =>
            e.objectRef?.resource === 'secrets' &&
            e.objectRef.name === SECRET &&
            (e.userAgent ?? '').startsWith('cert-operator/') === byOpkit &&
            (byOpkit || (e.userAgent ?? '').startsWith('cert-manager')),
        ).length;
      return {
        opkitRequests: created('cert.opkit.dev'),
        certManagerRequests: created('cert-manager.io'),
        opkitSecretWrites: secretWrites(true),
        certManagerSecretWrites: secretWrites(false),
      };
    }

    /** What each side wrote since `since`, one line a request: what a failed count is explained by. */
    function trail(since: Date): string {
      return plane
        .audit!.writes({ since })
        .filter((e) => e.objectRef?.namespace === NS && ['certificaterequests', 'secrets', 'certificates'].includes(e.objectRef?.resource ?? ''))
        .map(
          (e) =>
            `${e.requestReceivedTimestamp} ${e.verb} ${e.objectRef!.apiGroup || 'core'}/${e.objectRef!.resource}${e.objectRef!.subresource ? `/${e.objectRef!.subresource}` : ''} ${e.objectRef!.name ?? ''} → ${e.responseStatus?.code} by ${(e.userAgent ?? '').split(' ')[0]}`,
        )
        .join('\n');
    }

    /** Waits until neither side has created a request or written the Secret for QUIET_MS; returns the counts since `since`. */
    const settled = (since: Date) => waitForQuiet('both controllers to settle', () => counts(since), { quietMs: QUIET_MS, timeoutMs: 120_000 });

    const ours = () => admin.get(Certificate.kind, { namespace: NS, name: SECRET });
    const theirs = () => admin.get(CertManagerCertificate, { namespace: NS, name: SECRET });
    type Conditioned = { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } };
    /** The Ready condition of either side's Certificate (cert-manager's carries the same conditions). */
    const readyOf = (c: object) => ((c as Conditioned).status?.conditions ?? []).find((x) => x.type === 'Ready');
    const served = async () => {
      const s = await admin.get(Secret, { namespace: NS, name: SECRET });
      return {
        serial: new X509Certificate(Buffer.from(s.data!['tls.crt']!, 'base64')).serialNumber,
        holder: s.metadata.annotations?.['cert-manager.io/certificate-name'],
      };
    };

    /**
     * cert-manager's renewal forced as `cmctl renew` does it: an Issuing condition added to its
     * Certificate's status (any earlier one replaced), with the time of now.
     */
    async function forceCertManagerRenewal(): Promise<void> {
      const conditions = cmctlRenewConditions(((await theirs()) as Conditioned).status?.conditions);
      await plane.kubectl([
        'patch',
        'certificates.cert-manager.io',
        SECRET,
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { conditions } }),
      ]);
    }

    beforeAll(async () => {
      const toolset = await certManagerToolset();
      plane = await startControlPlane({ audit: true });
      admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
      await kubectlApply(plane.kubeconfigPath, toolset.crds);
      for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
      await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
      for (const name of [NS, 'opkit-system', 'cert-manager']) await plane.kubectl(['create', 'namespace', name]);

      // One CA, and an Issuer named "ca" on it in each API group: the annotation names both.
      const ca = await createCertificateAuthority('coexistence CA', 30);
      await admin.create(Secret, {
        metadata: { name: 'ca-key-pair', namespace: NS },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': ca.cert, 'tls.key': ca.key },
      } as never);
      for (const group of ['cert.opkit.dev', 'cert-manager.io'])
        await apply({ apiVersion: `${group}/v1`, kind: 'Issuer', metadata: { name: 'ca', namespace: NS }, spec: { ca: { secretName: 'ca-key-pair' } } });

      manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
      addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: 'opkit-system' }));
      startCertManagerController = () => {
        certManager = startCertManager(toolset, {
          kubeconfigPath: plane.kubeconfigPath,
          namespace: NS,
          clusterResourceNamespace: 'cert-manager',
          controllers: [...CERT_MANAGER_CA_CONTROLLERS, 'ingress-shim'],
        });
      };
    }, 900_000);
    afterAll(async () => {
      await certManager?.stop();
      await manager?.stop();
      await plane?.stop();
    });

    it('one Ingress for both: cert-manager keeps the Secret, ours says so, and neither re-issues over the other, forced renewals on both sides included', async () => {
      const start = new Date();
      await apply({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'web', namespace: NS, annotations: { 'cert-manager.io/issuer': 'ca' } },
        spec: {
          tls: [{ hosts: ['web.example.com'], secretName: SECRET }],
          rules: [
            { host: 'web.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } },
          ],
        },
      });
      const cmReady = () => waitFor('cert-manager Certificate Ready', async () => readyOf(await theirs())?.status === 'True', { timeoutMs: 60_000 });
      const withLog = (e: unknown) => {
        throw new Error(`${String(e)}\ncert-manager's log:\n${certManager?.recentOutput(30)}`);
      };
      if (order === 'cert-manager first') {
        startCertManagerController();
        await cmReady().catch(withLog);
        await manager!.start();
      } else {
        await manager!.start();
        await waitFor('ours Ready', async () => readyOf(await ours())?.status === 'True');
        startCertManagerController();
        await cmReady().catch(withLog);
      }
      const initially = await waitFor('ours to settle', async () => {
        const r = readyOf(await ours());
        return (r?.status === 'True' || r?.reason === 'SecretOwnedByCertManager') && r;
      });
      const first = await settled(start);
      console.log(`beside cert-manager, ${order}, at the start (ours ${initially.reason}): ${JSON.stringify(first)}`);
      // Whoever issued first, the other issues nothing: ours stands back, or cert-manager adopts.
      expect(first, trail(start)).toMatchObject(
        order === 'cert-manager first' ? { opkitRequests: 0, certManagerRequests: 1, opkitSecretWrites: 0 } : { opkitRequests: 1, certManagerRequests: 0 },
      );
      expect(initially.reason).toBe(order === 'cert-manager first' ? 'SecretOwnedByCertManager' : 'Ready');
      const heldSerial = (await served()).serial;

      // cert-manager's renewal forced, as `cmctl renew` does it (an Issuing condition): cert-manager
      // issues once, and its certificate-name annotation says it holds the Secret; ours stands back.
      let since = new Date();
      await forceCertManagerRenewal();
      await waitFor('cert-manager to re-issue', async () => (await served()).serial !== heldSerial);
      const refused = await waitFor('ours to stand back', async () => {
        const c = await ours();
        return readyOf(c)?.reason === 'SecretOwnedByCertManager' && c;
      });
      expect(readyOf(refused)?.message).toMatch(
        /^Secret "web-tls" is held by cert-manager's Certificate "web-tls" \(cert-manager.io\/v1\): not issuing into it/,
      );
      const afterTheirs = await settled(since);
      console.log(`cert-manager's renewal forced: ${JSON.stringify(afterTheirs)}`);
      expect(afterTheirs, trail(since)).toMatchObject({ opkitRequests: 0, certManagerRequests: 1, opkitSecretWrites: 0 });
      expect((await served()).holder).toBe(SECRET);
      await cmReady();

      // Our renewal forced: refused; nothing is issued, by either side.
      since = new Date();
      const held = (await served()).serial;
      await plane.kubectl(['annotate', 'certificate.cert.opkit.dev', SECRET, '-n', NS, 'cert.opkit.dev/renew=1']);
      const afterOurs = await settled(since);
      console.log(`our renewal forced: ${JSON.stringify(afterOurs)}`);
      expect(afterOurs, trail(since)).toEqual({ opkitRequests: 0, certManagerRequests: 0, opkitSecretWrites: 0, certManagerSecretWrites: 0 });
      expect((await served()).serial).toBe(held);
      expect(readyOf(await ours())?.reason).toBe('SecretOwnedByCertManager');

      // cert-manager forced once more: one more request of its own, none of ours.
      since = new Date();
      await forceCertManagerRenewal();
      await waitFor('cert-manager to re-issue again', async () => (await served()).serial !== held);
      expect(await settled(since), trail(since)).toMatchObject({ opkitRequests: 0, certManagerRequests: 1, opkitSecretWrites: 0 });

      // A refused forced renewal stays asked for (the annotation is ours to act on once we may):
      // withdrawn here, so the move below shows what the move alone does.
      await plane.kubectl(['annotate', 'certificate.cert.opkit.dev', SECRET, '-n', NS, 'cert.opkit.dev/renew-']);

      const total = counts(start);
      console.log(`beside cert-manager, in all: ${JSON.stringify(total)}`);
      expect(total, trail(start)).toMatchObject(
        order === 'cert-manager first' ? { opkitRequests: 0, certManagerRequests: 3 } : { opkitRequests: 1, certManagerRequests: 2 },
      );
    }, 600_000);

    it("the documented move of that Ingress: annotated for opkit, cert-manager's Certificate deleted; ours takes the Secret within a minute, cert-manager does not come back", async () => {
      const since = new Date();
      const before = await served();
      await plane.kubectl(['annotate', 'ingress', 'web', '-n', NS, 'cert-manager.io/issuer-', 'cert.opkit.dev/issuer=ca']);
      await plane.kubectl(['delete', 'certificates.cert-manager.io', SECRET, '-n', NS]);
      const taken = await waitFor(
        'ours Ready on the Secret',
        async () => {
          const c = await ours();
          return readyOf(c)?.status === 'True' && c;
        },
        { timeoutMs: 90_000 },
      );
      expect(taken.status?.conditions?.map((c) => c.reason)).not.toContain('SecretOwnedByCertManager');
      const after = await settled(since);
      console.log(`moved to opkit: ${JSON.stringify(after)}; the certificate cert-manager issued kept: ${(await served()).serial === before.serial}`);
      // A Certificate of ours that never issued keeps cert-manager's certificate: the move issues
      // nothing (docs/cert-operator.md). One that issued before cert-manager overwrote it has a
      // request for another key, and issues once.
      expect(after, trail(since)).toMatchObject({ certManagerRequests: 0, certManagerSecretWrites: 0 });
      if (order === 'opkit first') expect(after.opkitRequests, trail(since)).toBe(1);
      else {
        expect(after.opkitRequests, trail(since)).toBe(0);
        expect((await served()).serial).toBe(before.serial);
      }
      expect(await admin.find(CertManagerCertificate, { namespace: NS, name: SECRET })).toBeUndefined();
    }, 180_000);
  },
);
