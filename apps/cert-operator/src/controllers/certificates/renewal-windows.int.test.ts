import { Client, CoreEvent, CustomResourceDefinition, Transport, type Manager, type ObjectOf } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../../api/index.js';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;
type CertificateObject = ObjectOf<typeof Certificate.kind>;
const cond = (c: { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }, type: string) =>
  c.status?.conditions?.find((x) => x.type === type);

/**
 * Renewal windows and pausing, on the Certificate and on its issuer, against a real API server.
 * Each Certificate lives 1 h, and is made due for renewal at once (`age`): what holds it back, and
 * what lets it go, is seen within seconds.
 */
describe('renewal windows and pausing', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let n = 0;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const get = (namespace: string) => admin.get(Certificate.kind, { namespace, name: 'web' });
  const until = <T>(what: string, namespace: string, f: (c: CertificateObject) => T | undefined | false, timeoutMs = 30_000) =>
    waitFor(what, async () => f(await get(namespace)), { timeoutMs, intervalMs: 200 });

  /** A namespace with a SelfSigned issuer (its `renewal`), and a Certificate due for renewal 2 minutes after issuance. */
  async function setUp(certRenewal?: object, issuerRenewal?: object, issuerReady = 'True') {
    const namespace = `win${++n}`;
    await plane.kubectl(['create', 'namespace', namespace]);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'self', namespace },
      spec: { selfSigned: {}, ...(issuerRenewal ? { renewal: issuerRenewal } : {}) },
    });
    await waitFor(
      `the issuer Ready=${issuerReady}`,
      async () => cond(await admin.get(Issuer.kind, { namespace, name: 'self' }), 'Ready')?.status === issuerReady,
    );
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace },
      spec: {
        secretName: 'web',
        issuerRef: { name: 'self' },
        dnsNames: ['web.example.com'],
        duration: '1h',
        renewBefore: '58m',
        ...(certRenewal ? { renewal: certRenewal } : {}),
      },
    });
    return namespace;
  }
  /** Makes the renewal due now without waiting for it: renewBefore 59m59s of a 1 h lifetime is a second after issuance. */
  const age = async (namespace: string) => {
    await admin.patch(Certificate.kind, { namespace, name: 'web' }, { spec: { renewBefore: '59m59s' } }, 'merge');
  };

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', 'opkit-system']);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: 'opkit-system' }));
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it("holds a due renewal until the Certificate's next window, and renews at once when a window is open", async () => {
    // A window that opens daily, 30 minutes from now: inside the 1 h lifetime, so it holds the renewal.
    const opens = new Date(Date.now() + 30 * 60_000);
    const cron = `${opens.getUTCMinutes()} ${opens.getUTCHours()} * * *`;
    const namespace = await setUp({ windows: [{ cron, windowDuration: '5m' }] });
    const first = await until('issued', namespace, (c) => cond(c, 'Ready')?.status === 'True' && c);
    await age(namespace);
    const held = await until('the renewal time at the window', namespace, (c) => c.spec.renewBefore === '59m59s' && !!c.status?.renewalTime && c);
    const opening = new Date(opens);
    opening.setUTCSeconds(0, 0);
    expect(held.status?.renewalTime).toBe(opening.toISOString().replace('.000', ''));
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await get(namespace)).status?.revision).toBe(first.status?.revision);

    // A window open now lets it go at once.
    await admin.patch(Certificate.kind, { namespace, name: 'web' }, { spec: { renewal: { windows: [{ cron: '* * * * *', windowDuration: '1h' }] } } }, 'merge');
    const renewed = await until('renewed in the open window', namespace, (c) => c.status?.revision === 2 && c);
    expect(cond(renewed, 'Ready')?.status).toBe('True');
  });

  it("renews outside the windows when none opens before expiry, and says so; follows the issuer's windows when the Certificate has none", async () => {
    const namespace = await setUp(undefined, { windows: [{ cron: '0 0 1 1 *', windowDuration: '1h' }] });
    await until('issued', namespace, (c) => cond(c, 'Ready')?.status === 'True');
    await age(namespace);
    const renewed = await until('renewed', namespace, (c) => c.status?.revision === 2 && c);
    // Recorded beside the writes, not before them (see the pause test below): waited for, not read once.
    await waitFor('the event saying the renewal went outside the windows', async () =>
      (await admin.list(CoreEvent, { namespace })).items.some((e) =>
        /none of Issuer "self"'s renewal windows opens in time before expiry, so outside them/.test(e.message ?? ''),
      ),
    );
    expect(cond(renewed, 'Ready')?.status).toBe('True');
  });

  it('paused by the issuer: no renewal, the coming expiry said on the Certificate; renewed once the pause is lifted', async () => {
    const namespace = await setUp(undefined, { policy: 'Disabled' });
    const issued = await until('issued', namespace, (c) => cond(c, 'Ready')?.status === 'True' && c);
    expect(issued.status?.renewalTime).toBeUndefined();
    expect(cond(issued, 'RenewalPaused')).toMatchObject({
      status: 'True',
      reason: 'Paused',
      message: expect.stringMatching(/^Renewal is paused by Issuer "self"/),
    });
    await age(namespace);
    const overdue = await until('the expiry said', namespace, (c) => cond(c, 'RenewalPaused')?.reason === 'ExpiringWhilePaused' && c);
    expect(cond(overdue, 'RenewalPaused')?.message).toMatch(/was due for renewal at .* and expires at /);
    expect(cond(overdue, 'Ready')?.status).toBe('True');
    expect(overdue.status?.revision).toBe(1);
    // The Event is recorded beside the status write, not before it: on a busy machine the condition
    // is seen first (CI has caught the list empty).
    const warnings = await waitFor(
      'the ExpiringWhilePaused event',
      async () => {
        const found = (await admin.list(CoreEvent, { namespace })).items.filter((e) => e.reason === 'ExpiringWhilePaused');
        return found.length > 0 && found;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(warnings.map((e) => e.type)).toEqual(['Warning']);

    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'self', namespace }, spec: { selfSigned: {} } });
    const renewed = await until('renewed after the pause', namespace, (c) => c.status?.revision === 2 && c);
    expect(cond(renewed, 'RenewalPaused')).toBeUndefined();
  });

  it('says where a schedule is written wrong: on the Certificate (not issued), and on the issuer (which issues as if it had none)', async () => {
    const namespace = await setUp({ windows: [{ cron: '0 9 * * 7', windowDuration: '1h' }] });
    const bad = await until('refused', namespace, (c) => cond(c, 'Ready')?.reason === 'InvalidSpec' && c);
    expect(cond(bad, 'Ready')?.message).toMatch(/spec\.renewal\.windows\[0\]: day of week: 7 is outside 0-6/);

    // On the issuer: said on a condition of its own; the issuer still issues, as if it had no windows.
    const other = await setUp(undefined, { windows: [{ cron: '0 9 * * *', timezone: 'Mars/Olympus', windowDuration: '1h' }] });
    const issuer = await admin.get(Issuer.kind, { namespace: other, name: 'self' });
    expect(cond(issuer, 'RenewalWindows')).toMatchObject({
      status: 'False',
      reason: 'InvalidRenewalWindows',
      message: expect.stringMatching(/unknown time zone "Mars\/Olympus".*: ignored, the issuer's Certificates renew as if it had no windows$/),
    });
    await until('issued all the same', other, (c) => cond(c, 'Ready')?.status === 'True');
  });
});
