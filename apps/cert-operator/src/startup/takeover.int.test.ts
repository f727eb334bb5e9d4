import { Client, Secret, Transport, type Manager } from '@opkit/runtime';
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
  type CertManagerToolset,
  type ControlPlane,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../api/index.js';
import type { CertificateObject } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';

const api = CERT_APIS['cert-manager'];
const { Certificate } = api;
const NS = 'apps';
/** CA certificates cert-manager issues before the takeover (the issue's 100). */
const COUNT = 100;
/** One more, renewed by the clock a few minutes after cert-manager issued it: by whoever runs then. */
const CLOCK = 'clock';
/** A quiet spell this long counts as settled (both controllers write within a second of an event). */
const QUIET_MS = 15_000;

/**
 * Replacing cert-manager in place: cert-manager v1.21's controller (built from its Go module)
 * issues 100 CA certificates on its own CRDs, is scaled to zero, and opkit starts in cert-manager
 * mode over the same objects. Counted from the API server's audit log: no CertificateRequest for a
 * certificate that is valid and current, every revision kept; a forced renewal (as `cmctl renew`
 * asks it) and a clock-driven one each make exactly one; and back to cert-manager, it makes none.
 */
describe('replacing cert-manager in place (CA issuer)', () => {
  let plane: ControlPlane;
  let admin: Client;
  let toolset: CertManagerToolset;
  let certManager: { stop(): Promise<void>; recentOutput(lines?: number): string } | undefined;
  let manager: Manager | undefined;
  let logs: ReturnType<typeof testManager>['logs'] | undefined;
  const names = Array.from({ length: COUNT }, (_, i) => `web-${i}`);

  /** CertificateRequests the API server accepted since `since`, by who made them. */
  function requests(since: Date) {
    const created = plane
      .audit!.writes({ since })
      .filter((e) => e.verb === 'create' && e.objectRef?.resource === 'certificaterequests' && (e.responseStatus?.code ?? 0) < 300);
    const by = (prefix: string) => created.filter((e) => (e.userAgent ?? '').startsWith(prefix)).map((e) => e.objectRef!.name!);
    return { opkit: by('cert-operator/'), certManager: by('cert-manager') };
  }
  const settled = (since: Date) => waitForQuiet('the controllers to settle', () => requests(since), { quietMs: QUIET_MS, timeoutMs: 180_000 });
  const certificates = async () => (await admin.list(Certificate.kind, { namespace: NS })).items as CertificateObject[];
  const ready = (c: CertificateObject) => c.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
  const allReady = async () => {
    const list = await certificates();
    return list.length === COUNT + 1 && list.every(ready);
  };
  const serials = async () =>
    new Map(
      (await admin.list(Secret, { namespace: NS })).items
        .filter((s) => s.data?.['tls.crt'])
        .map((s) => [s.metadata.name!, new X509Certificate(Buffer.from(s.data!['tls.crt']!, 'base64')).serialNumber]),
    );
  const startTheirs = () => {
    certManager = startCertManager(toolset, {
      kubeconfigPath: plane.kubeconfigPath,
      namespace: NS,
      clusterResourceNamespace: 'cert-manager',
      controllers: [...CERT_MANAGER_CA_CONTROLLERS],
    });
  };
  const withLog = (e: unknown) => {
    throw new Error(`${String(e)}\ncert-manager's log:\n${certManager?.recentOutput(30)}`);
  };

  beforeAll(async () => {
    toolset = await certManagerToolset();
    plane = await startControlPlane({ audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    // cert-manager's own CRDs: opkit is installed over them, as over a cluster that runs cert-manager.
    await kubectlApply(plane.kubeconfigPath, toolset.crds);
    await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
    for (const ns of [NS, 'cert-manager']) await plane.kubectl(['create', 'namespace', ns]);
    const ca = await createCertificateAuthority('takeover CA', 30);
    await admin.create(Secret, {
      metadata: { name: 'ca-key-pair', namespace: NS },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': ca.cert, 'tls.key': ca.key },
    } as never);
    const items: object[] = [
      { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: NS }, spec: { ca: { secretName: 'ca-key-pair' } } },
    ];
    for (const name of names)
      items.push({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name, namespace: NS },
        spec: { secretName: `${name}-tls`, dnsNames: [`${name}.apps.example`], issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } },
      });
    // Renewed 3 minutes after issuance (a 1 h lifetime, renewBefore 57 m): after the takeover.
    items.push({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: CLOCK, namespace: NS },
      spec: { secretName: `${CLOCK}-tls`, dnsNames: ['clock.apps.example'], duration: '1h', renewBefore: '57m', issuerRef: { name: 'ca', kind: 'Issuer' } },
    });
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  }, 900_000);
  afterAll(async () => {
    await certManager?.stop();
    await manager?.stop();
    await plane?.stop();
  });

  it('no request for a valid, current certificate; forced and clock-driven renewals exactly once; and back to cert-manager, none', async () => {
    // cert-manager issues everything.
    const start = new Date();
    startTheirs();
    await waitFor(`cert-manager: ${COUNT + 1} Certificates Ready`, allReady, { timeoutMs: 300_000, intervalMs: 1_000 }).catch(withLog);
    const issued = await settled(start);
    // cert-manager's own count is its business (a request made again from a stale cache is one more).
    expect(issued.certManager.length).toBeGreaterThanOrEqual(COUNT + 1);
    const revisions = new Map((await certificates()).map((c) => [c.metadata.name, c.status?.revision]));
    const before = await serials();

    // Scaled to zero; opkit in cert-manager mode over the same objects.
    await certManager!.stop();
    certManager = undefined;
    const takeover = new Date();
    ({ manager, logs } = testManager(plane.kubeConfig, { name: 'cert-operator', namespaces: [NS, 'cert-manager'] }));
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: 'cert-manager' }), api, acme: false });
    await manager.start();
    const after = await settled(takeover);
    expect(after, 'no request for a valid, current certificate').toEqual({ opkit: [], certManager: [] });
    expect(await allReady()).toBe(true);
    expect(new Map((await certificates()).map((c) => [c.metadata.name, c.status?.revision]))).toEqual(revisions);
    const kept = await serials();
    for (const name of names) expect(kept.get(`${name}-tls`), name).toBe(before.get(`${name}-tls`));

    // A forced renewal, as cmctl renew asks it: an Issuing condition on the status.
    const forced = new Date();
    const target = names[7]!;
    const c = (await admin.get(Certificate.kind, { namespace: NS, name: target })) as CertificateObject;
    await admin.patch(Certificate.kind, { namespace: NS, name: target }, { status: { conditions: cmctlRenewConditions(c.status?.conditions) } }, 'merge', {
      subresource: 'status',
    });
    await waitFor(
      'the forced renewal issued',
      async () => ((await admin.get(Certificate.kind, { namespace: NS, name: target })) as CertificateObject).status?.revision === 2,
      {
        timeoutMs: 60_000,
      },
    ).catch(async (e) => {
      const events = await plane.kubectl(['get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${target}`, '-o', 'wide']);
      const crs = (await admin.list(api.CertificateRequest.kind, { namespace: NS })).items.filter((r) => r.metadata.name?.startsWith(`${target}-`));
      throw new Error(
        `${String(e)}\nstatus: ${JSON.stringify((await admin.get(Certificate.kind, { namespace: NS, name: target })).status)}\nrequests: ${JSON.stringify(crs.map((r) => [r.metadata.name, r.metadata.annotations, r.status?.conditions]))}\nevents: ${events.stdout}\nlogs: ${JSON.stringify(logs?.lines.filter((l) => (l.level ?? 0) >= 40 || JSON.stringify(l).includes(`${target}-2`)).slice(-30))}`,
      );
    });
    expect((await settled(forced)).opkit).toEqual([`${target}-2`]);
    expect((await serials()).get(`${target}-tls`)).not.toBe(before.get(`${target}-tls`));

    // The clock: the short-lived certificate renewed at its renewal time, once, by opkit.
    const clock = (await admin.get(Certificate.kind, { namespace: NS, name: CLOCK })) as CertificateObject;
    const renewAt = Date.parse(clock.status!.renewalTime!);
    await waitFor(
      'the clock-driven renewal',
      async () => ((await admin.get(Certificate.kind, { namespace: NS, name: CLOCK })) as CertificateObject).status?.revision === 2,
      {
        timeoutMs: Math.max(0, renewAt - Date.now()) + 60_000,
      },
    );
    const renewed = requests(takeover).opkit.filter((n) => n.startsWith(`${CLOCK}-`));
    expect(renewed).toEqual([`${CLOCK}-2`]);

    // Back to cert-manager: it takes everything as it is.
    await manager.stop();
    manager = undefined;
    const rollback = new Date();
    startTheirs();
    const back = await settled(rollback).catch(withLog);
    if (back.certManager.length) {
      const events = await plane.kubectl([
        'get',
        'events',
        '-n',
        NS,
        '--sort-by=.lastTimestamp',
        '-o',
        'custom-columns=OBJ:.involvedObject.name,SRC:.source.component,REASON:.reason,MSG:.message',
      ]);
      console.log(
        `cert-manager after the rollback:\n${events.stdout
          .split('\n')
          .filter((l) => back.certManager.some((n) => l.startsWith(n.replace(/-\d+$/, '') + ' ')))
          .join('\n')}`,
      );
    }
    expect(back, 'cert-manager re-issues nothing after the rollback').toEqual({ opkit: [], certManager: [] });
    expect(await allReady()).toBe(true);
  }, 600_000);
});
