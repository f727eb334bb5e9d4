// Short lifetimes at scale (issue 31): N ACME certificates whose lifetime is six days compressed
// (by default 30 minutes, six days / 288), renewed continuously for several renewal periods
// against Pebble, with the CA's renewal windows (ARI) scaled the same way (ari-scaler.ts). Pebble
// validates every challenge (PEBBLE_VA_ALWAYS_VALID) and by default reuses authorizations for their hour, so
// what is measured is the operator's renewal machinery, not the solver pods the simulated cluster
// cannot run. Printed: renewals, those started inside / outside the window the CA gave, those
// renewed only after expiry (missed), API writes per renewal (the audit log; each period's as it
// ends), renewal-info requests per issuance, the operator's CPU and memory, the load average; at
// each period's end, each controller's reconciles and their mean time, and every 30 s each queue
// (a long one broken down by priority and by what queued its keys: queue-watch.ts).
//   OPKIT_BENCH_SHORT_N=10000            certificates
//   OPKIT_BENCH_SHORT_LIFETIME_S=1800    their lifetime (six days is 518400)
//   OPKIT_BENCH_SHORT_PERIODS=3          renewal periods followed after the first issuance (renewals during it count too)
//   OPKIT_BENCH_SHORT_SPREAD=0           0: the fleet is created as fast as the API server takes it, so it renews in lockstep
//                                        (each period's renewals all come due within the first issuance's length, which
//                                        compression does not shorten); 1: created at an even pace over one renewal period,
//                                        a fleet in steady state, whose renewals come due evenly (N / period a second)
//   OPKIT_BENCH_SHORT_AUTHZ_REUSE=100    the share of issuances, in %, for which Pebble reuses a valid authorization
//                                        (for its hour, not compressed); 0: every issuance validates again, as with
//                                        Let's Encrypt once its reuse period (7 hours from 2028) is shorter than a renewal period
//   OPKIT_BENCH_HEAP_SNAPSHOT=FILE       write a V8 heap snapshot of the process (operator in-process) there after the first issuance,
//                                        and to FILE.period-N at the end of each period (what grows between them)
import { writeHeapSnapshot } from 'node:v8';
import { Informer, silentLogger, Transport, type ObjectOf } from '@opkit/runtime';
import { startControlPlane, startPebble, waitFor } from '@opkit/testing';
import { loadAverage, mib, runBench, table } from '../report.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';
import { startAriScaler } from './ari-scaler.js';
import { startCertOperator } from './operator.js';
import { watchQueues } from './queue-watch.js';

const { Certificate, CertificateRequest, Issuer, A } = CERT_APIS.opkit;
const N = Number(process.env.OPKIT_BENCH_SHORT_N ?? 10_000);
const LIFETIME_S = Number(process.env.OPKIT_BENCH_SHORT_LIFETIME_S ?? 1_800);
const PERIODS = Number(process.env.OPKIT_BENCH_SHORT_PERIODS ?? 3);
const SPREAD = process.env.OPKIT_BENCH_SHORT_SPREAD === '1';
const AUTHZ_REUSE = Number(process.env.OPKIT_BENCH_SHORT_AUTHZ_REUSE ?? 100);
const NS = 'bench';
/** How late a renewal may start after its window closed and still count as in it: the queue's latency. */
const GRACE_MS = 5_000;

type Cert = ObjectOf<typeof Certificate.kind>;

async function main() {
  // With the garbage collector, as a cluster has: solver pods and Services go with their Challenge.
  const plane = await startControlPlane({ audit: true, controllerManager: true });
  const pebble = await startPebble({
    profiles: { bench: { validityPeriod: LIFETIME_S, description: `six days / ${Math.round(518_400 / LIFETIME_S)}` } },
    env: { PEBBLE_VA_ALWAYS_VALID: '1', PEBBLE_AUTHZREUSE: String(AUTHZ_REUSE) },
  });
  const scaler = await startAriScaler(pebble);
  const cpu0 = process.cpuUsage();
  try {
    const { admin, manager } = await startCertOperator(plane, {});
    await admin.create(Issuer.kind, {
      metadata: { name: 'acme', namespace: NS },
      spec: {
        acme: {
          server: scaler.directoryUrl,
          caBundle: Buffer.from(`${pebble.tlsCaPem}\n${scaler.caPem}`).toString('base64'),
          privateKeySecretRef: { name: 'acme-account' },
          profile: 'bench',
          solvers: [{ http01: { ingress: {} }, waitInsteadOfSelfCheck: '1s' }],
        },
      },
    } as never);
    await waitFor('the ACME issuer', async () => (await admin.get(Issuer.kind, { namespace: NS, name: 'acme' })).status?.conditions?.[0]?.status === 'True', {
      timeoutMs: 60_000,
    });

    // What the cluster shows, as it happens: each certificate's validity and the window the CA gave
    // for it, and when each renewal's request was made.
    const transport = new Transport(plane.kubeConfig);
    const windows = new Map<string, { start: number; end: number }>(); // `${name}@${notAfter}` → window
    const validity = new Map<string, number[]>(); // name → notAfter of each revision, by revision
    const certs = new Informer(transport, Certificate.kind, silentLogger(), { namespace: NS });
    const seen = (c: Cert) => {
      const s = c.status;
      if (!s?.notAfter || !s.revision) return;
      const byRevision = validity.get(c.metadata.name!) ?? [];
      byRevision[s.revision] = Date.parse(s.notAfter);
      validity.set(c.metadata.name!, byRevision);
      const w = s.acme?.ari?.suggestedWindow;
      if (w) windows.set(`${c.metadata.name}@${Date.parse(s.notAfter)}`, { start: Date.parse(w.start), end: Date.parse(w.end) });
    };
    certs.addHandler({ onAdd: seen, onUpdate: (_, c) => seen(c) });
    const requests: { name: string; revision: number; created: number }[] = [];
    /** Certificates whose request for the first revision is Ready: their issuance is the Certificate's to finish. */
    const firstSigned = new Set<string>();
    const crs = new Informer(transport, CertificateRequest.kind, silentLogger(), { namespace: NS });
    const signed = (cr: ObjectOf<typeof CertificateRequest.kind>) => {
      if (cr.metadata.annotations?.[A.revision] === '1' && cr.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        firstSigned.add(cr.metadata.annotations[A.certificateName] ?? '');
    };
    crs.addHandler({
      onAdd: (cr) => {
        signed(cr);
        requests.push({
          name: cr.metadata.annotations?.[A.certificateName] ?? '',
          revision: Number(cr.metadata.annotations?.[A.revision] ?? 0),
          created: Date.parse(cr.metadata.creationTimestamp!),
        });
      },
      onUpdate: (_, cr) => signed(cr),
    });
    const queues = watchQueues(manager, admin, Certificate.kind);

    // The operator's API writes in the namespace (Events aside), by the period they were received
    // in (0: before the periods), counted as the log grows: read at least every minute, so each
    // period's figures print when it ends (a run stopped early keeps them) and no read goes
    // through a whole log at once (a gigabyte an hour here, read on this process's event loop,
    // which is the operator's).
    const periodMs = ((LIFETIME_S * 2) / 3) * 1000;
    // When the periods start: set once the first round is issued (the count runs before that too).
    const periods: { from?: number } = {};
    /** The period `at` falls in: 0 before the first, undefined after the last. */
    const periodOf = (at: number) => {
      if (periods.from === undefined || at < periods.from) return 0;
      const p = Math.floor((at - periods.from) / periodMs) + 1;
      return p <= PERIODS ? p : undefined;
    };
    const writesIn = Array.from({ length: PERIODS + 1 }, () => ({ total: 0, byKind: new Map<string, number>() }));
    const countWrites = () =>
      plane.audit!.scanWrites({}, (e) => {
        if (!e.userAgent?.startsWith('cert-operator/') || e.objectRef?.namespace !== NS || e.objectRef.resource === 'events') return;
        const p = periodOf(Date.parse(e.requestReceivedTimestamp));
        if (p === undefined) return;
        const k = `${e.verb} ${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}`;
        writesIn[p]!.byKind.set(k, (writesIn[p]!.byKind.get(k) ?? 0) + 1);
        writesIn[p]!.total++;
      });
    const perRenewal = (byKind: Map<string, number>, renewals: number) =>
      Object.fromEntries([...byKind].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(v / Math.max(1, renewals)).toFixed(2)]));
    certs.start();
    crs.start();
    await Promise.all([certs.waitForSync(), crs.waitForSync()]);

    const t0 = Date.now();
    // Spread: certificate i is created at t0 + i · period / N, in batches of whatever is due each second.
    const spreadMs = SPREAD ? periodMs : 0;
    let created = 0;
    const creating = (async () => {
      while (created < N) {
        const due = spreadMs ? Math.min(N, Math.floor(((Date.now() - t0) / spreadMs) * N) + 1) : N;
        const batch = Math.min(100, due - created);
        if (batch <= 0) {
          await new Promise((r) => setTimeout(r, 1_000));
          continue;
        }
        const from = created;
        created += batch;
        await Promise.all(
          Array.from({ length: batch }, (_, j) =>
            admin.create(Certificate.kind, {
              metadata: { name: `c${from + j}`, namespace: NS },
              spec: { secretName: `c${from + j}`, issuerRef: { name: 'acme' }, dnsNames: [`c${from + j}.bench.test`], privateKey: { algorithm: 'ECDSA' } },
            } as never),
          ),
        );
      }
    })();
    // A creation that fails ends the run at the next check, not as an unhandled rejection.
    let creationError: unknown;
    creating.catch((err: unknown) => (creationError = err));
    const issued = () => [...validity.values()].filter((v) => v[1] !== undefined).length;
    for (let last = 0, lastCount = -1; issued() < N;) {
      await new Promise((r) => setTimeout(r, 1_000));
      if (creationError) throw creationError;
      if (Date.now() - t0 > spreadMs + Math.max(600_000, N * 300)) throw new Error(`${issued()} of ${N} issued after ${(Date.now() - t0) / 1000} s`);
      if (Date.now() - last >= 30_000) {
        last = Date.now();
        const done = issued();
        const signedNotRecorded = [...firstSigned].filter((n) => validity.get(n)?.[1] === undefined);
        const renewing = requests.filter((r) => r.revision >= 2).length;
        console.log(
          `  … ${created} created, ${done} of ${N} issued after ${((Date.now() - t0) / 1000).toFixed(0)} s, ${signedNotRecorded.length} signed and not yet recorded, ${renewing} renewals started (load ${loadAverage()})`,
        );
        await queues.print();
        countWrites();
        // No progress for 30 s: say where the signed ones wait.
        if (done === lastCount)
          for (const n of signedNotRecorded.slice(0, 2)) console.log(`    why ${NS}/${n} waits:`, JSON.stringify(queues.explain(`${NS}/${n}`)));
        lastCount = done;
      }
    }
    await creating;
    const firstRound = (Date.now() - t0) / 1000;
    // Where the memory is, to tell a cache that holds more objects from a heap that keeps what it
    // should not (the 10,000 run's RSS grew by a fifth each period): the process's figures and
    // the operator's cache, objects per informer.
    const memory = () => {
      const m = process.memoryUsage();
      const objects = Object.entries(manager.cache.sizes())
        .map(([informer, n]) => {
          const [kind = '', , , shape] = informer.split('|'); // cache.ts's informer id: kind|labels|fields|shape
          return `${kind.split('/').pop()}${shape === 'meta' ? ' (metadata)' : ''} ${n}`;
        })
        .join(', ');
      return `RSS ${mib(m.rss)} MiB, heap ${mib(m.heapUsed)} MiB, external ${mib(m.external)} MiB (array buffers ${mib(m.arrayBuffers)}); cached: ${objects}`;
    };
    console.log(`after the first issuance: ${memory()}`);
    if (process.env.OPKIT_BENCH_HEAP_SNAPSHOT) console.log(`heap snapshot: ${writeHeapSnapshot(process.env.OPKIT_BENCH_HEAP_SNAPSHOT)}`);
    console.log(
      `first issuance of ${N}${SPREAD ? ' (spread over a renewal period)' : ''}: ${firstRound.toFixed(0)} s; following ${PERIODS} renewal periods of ${(periodMs / 60_000).toFixed(1)} min`,
    );

    let reconcilesBefore = (await queues.reconciles()).now;
    let cpuBefore = process.cpuUsage();
    const steadyFrom = Date.now();
    periods.from = steadyFrom;
    const ariAtSteady = scaler.requests;

    // Each renewal started by `until`, against the window the CA gave for the certificate it
    // replaced: every renewal, those that came due while the first issuance was still going on
    // included (the first certificates renew before the last are issued).
    const judge = (until: number) => {
      const verdicts = { inWindow: 0, early: 0, late: 0, noWindow: 0, afterExpiry: 0, worstLateMs: 0 };
      const renewals = requests.filter((r) => r.revision >= 2 && r.created <= until);
      for (const r of renewals) {
        const prevNotAfter = validity.get(r.name)?.[r.revision - 1];
        if (prevNotAfter !== undefined && r.created > prevNotAfter) verdicts.afterExpiry++;
        const w = prevNotAfter === undefined ? undefined : windows.get(`${r.name}@${prevNotAfter}`);
        if (!w) verdicts.noWindow++;
        else if (r.created < w.start - 1_000) verdicts.early++;
        else if (r.created > w.end + GRACE_MS) {
          verdicts.late++;
          verdicts.worstLateMs = Math.max(verdicts.worstLateMs, r.created - w.end);
        } else verdicts.inWindow++;
      }
      // Certificates whose newest certificate has expired without a renewal started in time.
      const expired = [...validity.values()].filter((v) => v[v.length - 1]! < until).length;
      return { renewals, verdicts, expired, steady: renewals.filter((r) => r.created >= steadyFrom).length };
    };

    for (let p = 1; p <= PERIODS; p++) {
      for (const end = steadyFrom + p * periodMs; Date.now() < end;) {
        await new Promise((r) => setTimeout(r, Math.min(60_000, end - Date.now())));
        await queues.print();
        countWrites();
      }
      // Judged as it goes, so a run stopped early still says what its finished periods did. The
      // writes received in the period's last seconds may not be logged yet: a few, counted short.
      const { renewals, verdicts: v, expired, steady } = judge(Date.now());
      countWrites();
      const started = requests.filter((r) => r.revision >= 2 && periodOf(r.created) === p).length;
      console.log(
        `  period ${p}: ${renewals.length} renewals (${steady} in the periods): ${v.inWindow} in the window, ${v.early} before, ${v.late} after (worst ${(v.worstLateMs / 1000).toFixed(1)} s), ${v.noWindow} without one, ${v.afterExpiry} after expiry; ${expired} expired now; ${memory()}; load ${loadAverage()}`,
      );
      console.log(
        `  period ${p}: ${started} renewals started in it, ${(writesIn[p]!.total / Math.max(1, started)).toFixed(2)} API writes per renewal:`,
        perRenewal(writesIn[p]!.byKind, started),
      );
      // Where the period's work went: reconciles per controller (a renewal's share of each), and
      // the operator's process CPU against the period's length.
      const reconciles = await queues.reconciles(reconcilesBefore);
      const cpu = process.cpuUsage(cpuBefore);
      console.log(
        `  period ${p}: reconciles (mean time): ${reconciles.text}; the operator's process ${((cpu.user + cpu.system) / 1e6).toFixed(0)} CPU-s in ${(periodMs / 1000).toFixed(0)} s`,
      );
      reconcilesBefore = reconciles.now;
      cpuBefore = process.cpuUsage();
      if (process.env.OPKIT_BENCH_HEAP_SNAPSHOT) console.log(`heap snapshot: ${writeHeapSnapshot(`${process.env.OPKIT_BENCH_HEAP_SNAPSHOT}.period-${p}`)}`);
    }
    const until = Date.now();
    // The writes and renewal-info requests per renewal are counted over the followed periods only,
    // where no first issuance runs.
    const { renewals, verdicts, expired: expiredNow, steady: steadyRenewals } = judge(until);
    const worstLateMs = verdicts.worstLateMs;

    countWrites();
    const byKind = new Map<string, number>();
    let writes = 0;
    for (const period of writesIn.slice(1)) {
      writes += period.total;
      for (const [k, n] of period.byKind) byKind.set(k, (byKind.get(k) ?? 0) + n);
    }
    const issuances = steadyRenewals;
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage(cpu0);
    table([
      {
        certificates: N,
        'lifetime s': LIFETIME_S,
        fleet: SPREAD ? 'steady' : 'lockstep',
        'authz reuse %': AUTHZ_REUSE,
        'renewals followed (in the periods)': `${renewals.length} (${steadyRenewals})`,
        'started in the window': verdicts.inWindow,
        'before it': verdicts.early,
        'after it (worst, s)': `${verdicts.late} (${(worstLateMs / 1000).toFixed(1)})`,
        'no window known': verdicts.noWindow,
        'after expiry': verdicts.afterExpiry,
        'expired at the end': expiredNow,
        'API writes per renewal': issuances ? (writes / issuances).toFixed(2) : '-',
        'renewal-info requests per renewal': issuances ? ((scaler.requests - ariAtSteady) / issuances).toFixed(2) : '-',
      },
    ]);
    console.log('writes per renewal by kind:', perRenewal(byKind, issuances));
    console.log(
      `bench process (operator in-process): ${((cpu.user + cpu.system) / 1e6).toFixed(1)} CPU-s, RSS ${(mem.rss / 2 ** 20).toFixed(0)} MiB, heap ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB; first issuance ${firstRound.toFixed(0)} s; load average ${loadAverage()}`,
    );
    queues.stop();
    await Promise.all([certs.stop(), crs.stop(), manager.stop()]);
  } finally {
    await scaler.stop();
    await pebble.stop();
    await plane.stop();
  }
}

runBench(main);
