import { Client, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Certificate, CertificateRequest, Issuer, L } = CERT_APIS.opkit;

const OPERATOR = 'cert-operator';
const NS = 'fleet';
const COUNT = 1_000;
const PERIODS = 3;
// A 1 h certificate renewed 58 min before expiry: a renewal period of 2 min.
const RENEW_BEFORE = '58m';

/**
 * The done-when of the trigger rework: a fleet of CA-issued certificates followed over three
 * renewal periods is issued exactly once per period, and nothing else is written (the audit log).
 */
describe(`${COUNT} CA certificates over ${PERIODS} renewal periods, against a real API server`, () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;

  beforeAll(async () => {
    plane = await startControlPlane({ audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    for (const ns of ['opkit-system', NS]) await plane.kubectl(['create', 'namespace', ns]);
    manager = testManager(plane.kubeConfig, { name: OPERATOR }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: 'opkit-system' }));
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it(
    'issues each exactly once per period, and writes nothing else',
    async () => {
      const apply = (items: object[]) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
      const issuer = (name: string, spec: object) => ({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name, namespace: NS }, spec });
      await apply([
        issuer('selfsigned', { selfSigned: {} }),
        {
          apiVersion: 'cert.opkit.dev/v1',
          kind: 'Certificate',
          metadata: { name: 'root', namespace: NS },
          spec: {
            secretName: 'root',
            isCA: true,
            commonName: 'fleet root',
            duration: '8760h',
            issuerRef: { name: 'selfsigned' },
            privateKey: { algorithm: 'ECDSA' },
          },
        },
        issuer('ca', { ca: { secretName: 'root' } }),
      ]);
      await waitFor(
        'the CA issuer Ready',
        async () => (await admin.get(Issuer.kind, { namespace: NS, name: 'ca' })).status?.conditions?.[0]?.status === 'True',
        { timeoutMs: 30_000 },
      );
      // The root's issuance has settled too: the CA issuer is Ready as soon as the root's Secret
      // exists, and the root's last status write and next-key cleanup could fall inside the window
      // counted below (a fresh-clone run saw them there, under load).
      await waitFor(
        'the root Certificate settled',
        async () => {
          const root = await admin.get(Certificate.kind, { namespace: NS, name: 'root' });
          const keys = await admin.list(Secret, { namespace: NS, labelSelector: `${L.nextPrivateKey}=true` });
          return root.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && !keys.items.length;
        },
        { timeoutMs: 30_000 },
      );
      const since = new Date();
      const names = Array.from({ length: COUNT }, (_, i) => `c${String(i).padStart(4, '0')}`);
      await apply(
        names.map((name) => ({
          apiVersion: 'cert.opkit.dev/v1',
          kind: 'Certificate',
          metadata: { name, namespace: NS },
          spec: {
            secretName: name,
            dnsNames: [`${name}.fleet.example.com`],
            duration: '1h',
            renewBefore: RENEW_BEFORE,
            issuerRef: { name: 'ca' },
            privateKey: { algorithm: 'ECDSA' },
          },
        })),
      );
      const revisions = async () =>
        new Map(
          (await admin.list(Certificate.kind, { namespace: NS })).items
            .filter((c) => c.metadata.name !== 'root')
            .map((c) => [c.metadata.name, c.status?.revision ?? 0]),
        );
      const started = Date.now();
      for (let r = 1; r <= PERIODS + 1; r++) {
        await waitFor(`every certificate at revision ${r}`, async () => [...(await revisions()).values()].every((v) => v >= r), {
          timeoutMs: 6 * 60_000,
          intervalMs: 2_000,
        });
        console.log(`revision ${r} everywhere after ${Math.round((Date.now() - started) / 1000)} s`);
      }
      // Under load the first issuance of a thousand takes longer than a period, so the first issued
      // fall due again before the last are done: the certificates are not in step, and each is judged
      // by its own issuances (below), not by a count taken at one moment.
      // An issuance ends in the reconcile that records it: the replaced request is deleted right
      // after the status write, not whenever the queue next reaches the key (CI once saw 20 such
      // deletes late, under load). Two seconds' grace for the last write in flight.
      await new Promise((r) => setTimeout(r, 2_000));
      const current = await revisions();
      const requests = (await admin.list(CertificateRequest.kind, { namespace: NS })).items.map((r) => r.metadata.name ?? '').filter((n) => n.startsWith('c'));
      // Only the current revision's request is kept (revisionHistoryLimit 1), and the next one's while it is issued.
      expect(
        requests.filter((n) => {
          const [name, rev] = n.split('-');
          const r = Number(rev);
          return r !== current.get(name) && r !== (current.get(name) ?? 0) + 1;
        }),
      ).toEqual([]);
      const finalRevisions = await revisions();
      const until = new Date();
      // The next keys of issuances under way at the cut: a key is made before its request, so a key
      // counted below may belong to a request made after the cut (a fresh-clone run counted 4 such
      // keys of 4,078). Read at once: such an issuance cannot complete and delete its key sooner.
      const pendingKeys = (await admin.list(Secret, { namespace: NS, labelSelector: `${L.nextPrivateKey}=true` })).items.length;

      const writes = plane
        .audit!.writes({ since })
        .filter(
          (e) =>
            e.userAgent?.startsWith(`${OPERATOR}/`) &&
            e.objectRef?.namespace === NS &&
            e.objectRef?.resource !== 'events' &&
            Date.parse(e.requestReceivedTimestamp) <= until.getTime(),
        );
      // Per certificate: what its issuances wrote, by kind of write.
      const owner = (w: (typeof writes)[number]) => /^(c\d{4})(-|$)/.exec(w.objectRef?.name ?? '')?.[1];
      const per = new Map<string, Map<string, number>>();
      const unnamed: string[] = [];
      for (const w of writes) {
        const name = owner(w);
        // The next key's Secret is created with generateName: the audit log has no name for it.
        if (!name) {
          unnamed.push(`${w.verb} ${w.objectRef?.resource}${w.objectRef?.name ? `/${w.objectRef.name}` : ''}`);
          continue;
        }
        // A refused write (a 409 conflict on a stale read) is counted apart: it changed nothing.
        const code = w.responseStatus?.code ?? 0;
        const k = `${w.verb} ${w.objectRef?.resource}${w.objectRef?.subresource ? `/${w.objectRef.subresource}` : ''}${code >= 300 ? ` → ${code}` : ''}`;
        const m = per.get(name) ?? new Map<string, number>();
        m.set(k, (m.get(k) ?? 0) + 1);
        per.set(name, m);
      }
      const total = new Map<string, number>();
      for (const m of per.values()) for (const [k, v] of m) total.set(k, (total.get(k) ?? 0) + v);
      console.log(
        `${writes.length} writes for ${COUNT} certificates × ${PERIODS + 1} issuances:`,
        Object.fromEntries([...total].map(([k, v]) => [k, v / COUNT])),
      );
      const worst = [...per].sort((a, b) => (b[1].get('update certificates/status') ?? 0) - (a[1].get('update certificates/status') ?? 0))[0]!;
      console.log(`most Certificate status writes: ${worst[0]}`, Object.fromEntries(worst[1]));
      // Conflicts happen (the cache lags the writes under this load) but stay rare.
      const refused = [...total].filter(([k]) => k.includes(' → ')).reduce((n, [, v]) => n + v, 0);
      expect(refused).toBeLessThanOrEqual(COUNT * 0.05);
      expect(per.size).toBe(COUNT);
      // Exactly one issuance per period: each certificate's requests are a renewal period apart (never
      // sooner), their number is its revision, and each wrote the Secret once.
      const PERIOD_MS = (60 - 58) * 60_000;
      const created = new Map<string, number[]>();
      for (const w of writes.filter((x) => x.verb === 'create' && x.objectRef?.resource === 'certificaterequests' && (x.responseStatus?.code ?? 0) < 300)) {
        const name = owner(w)!;
        created.set(name, [...(created.get(name) ?? []), Date.parse(w.requestReceivedTimestamp)]);
      }
      const early: string[] = [];
      for (const [name, times] of created) {
        times.sort((x, y) => x - y);
        for (let i = 1; i < times.length; i++)
          if (times[i]! - times[i - 1]! < PERIOD_MS - 5_000)
            early.push(`${name}: issuance ${i + 1} came ${((times[i]! - times[i - 1]!) / 1000).toFixed(1)} s after the one before`);
      }
      expect(early).toEqual([]);
      // Between issuances, nothing at all: after a certificate's Secret is written, no write names it
      // until its next renewal is due. Judged per certificate from its own writes, so it holds
      // however far behind the operator runs under load (the issuances of a thousand then overlap a
      // period, and no moment is quiet for all of them). The window opens when the issuance's last
      // writes (status, the replaced request and key deleted) are done, which may trail its Secret
      // write under load; it closes a period after the request was signed (the certificate's
      // notBefore, which under load precedes the Secret write by up to half a minute).
      const TRAIL_MS = 15_000;
      const LEAD_MS = 5_000;
      const timesOf = (pred: (w: (typeof writes)[number]) => boolean) => {
        const m = new Map<string, number[]>();
        for (const w of writes.filter((x) => pred(x) && (x.responseStatus?.code ?? 0) < 300))
          m.set(owner(w)!, [...(m.get(owner(w)!) ?? []), Date.parse(w.requestReceivedTimestamp)]);
        return m;
      };
      const secretWrites = timesOf((w) => w.verb === 'patch' && w.objectRef?.resource === 'secrets');
      const signed = timesOf((w) => w.objectRef?.resource === 'certificaterequests' && w.objectRef.subresource === 'status');
      const windows = new Map<string, [number, number][]>();
      for (const [name, patches] of secretWrites) {
        windows.set(
          name,
          patches.map((p) => {
            const s = Math.max(...(signed.get(name) ?? []).filter((t) => t <= p));
            return [p + TRAIL_MS, s + PERIOD_MS - LEAD_MS] as [number, number];
          }),
        );
      }
      const between: string[] = [];
      for (const w of writes) {
        const t = Date.parse(w.requestReceivedTimestamp);
        const inside = (windows.get(owner(w) ?? '') ?? []).find(([from, to]) => t > from && t < to);
        if (inside)
          between.push(
            `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name} ${((t - inside[0] + TRAIL_MS) / 1000).toFixed(1)} s after its Secret was written`,
          );
      }
      const quietMs = [...windows.values()].flat().reduce((n, [from, to]) => n + Math.max(0, Math.min(to, until.getTime()) - from), 0);
      console.log(`${(quietMs / 3_600_000).toFixed(1)} certificate-hours between issuances checked for writes`);
      expect(between).toEqual([]);
      // One new key per issuance, and nothing else without a certificate's name on it.
      expect(unnamed.filter((u) => u !== 'create secrets')).toEqual([]);
      const issuances = [...created.values()].reduce((n, t) => n + t.length, 0);
      expect(unnamed.length).toBeGreaterThanOrEqual(issuances);
      expect(unnamed.length).toBeLessThanOrEqual(issuances + pendingKeys);
      for (const [name, m] of per) {
        const issuances = created.get(name)?.length ?? 0;
        // Issued as many times as its revision says: one more only when an issuance was under way at the end.
        const done = finalRevisions.get(name)!;
        expect(done, name).toBeGreaterThanOrEqual(PERIODS + 1);
        expect([done, done + 1], name).toContain(issuances);
        expect(m.get('create certificaterequests'), name).toBe(issuances);
        expect([done, issuances], name).toContain(m.get('patch secrets'));
        // The request's own progress (approved, signed) and the Certificate's (issuing, issued): a
        // bounded number per issuance, never a loop. Two more per certificate: a reconcile that
        // fails twice running is reported on the Certificate (Ready False with the error) and cleared
        // by its next success. Under CI's load (the kind suites beside this one) one certificate of
        // the thousand once took 13 against 12; the run did not keep why.
        expect(m.get('update certificates/status') ?? 0, name).toBeLessThanOrEqual(3 * issuances + 2);
        expect(m.get('update certificaterequests/status') ?? 0, name).toBeLessThanOrEqual(2 * issuances);
        // Each issuance deletes the one next key it made: no key made twice (a lost race) and cleaned up.
        expect(m.get('delete secrets') ?? 0, name).toBeLessThanOrEqual(issuances);
        const known = [
          'create certificaterequests',
          'patch secrets',
          'update certificates/status',
          'update certificaterequests/status',
          'delete certificaterequests',
          'delete secrets',
        ];
        expect(
          [...m.keys()].filter((k) => !known.includes(k.replace(/ → 409$/, ''))),
          name,
        ).toEqual([]);
      }
    },
    30 * 60_000,
  );
});
