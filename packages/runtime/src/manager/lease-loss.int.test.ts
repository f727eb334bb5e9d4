import { waitFor } from '@opkit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigMap, Lease, Namespace } from '../client/kind.js';
import { controllerFor } from '../controller/builder.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { testManager } from '../testing/harness.js';
import type { Manager } from './manager.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Short terms keep the outages short; the ratios are the defaults' (15 s / 10 s / 2 s).
const TERMS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };

/**
 * The API server goes away for longer than the lease, or hangs. A replica that cannot renew must
 * stop acting at once, must not exit (a blinking API server is no reason to restart a pod), and
 * must lead again when it can; two replicas must never both write.
 */
describe('losing the leader lease', () => {
  const suite = useControlPlane({ audit: true });
  const managers: Manager[] = [];
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  beforeAll(() => void process.on('warning', onWarning));
  afterEach(async () => {
    suite.plane.apiServer.thaw();
    if (!suite.plane.apiServer.running) await suite.plane.apiServer.start(60_000);
    await Promise.all(managers.splice(0).map((m) => m.stop()));
  });
  afterAll(() => void process.off('warning', onWarning));

  const outage = async (ms: number) => {
    await suite.plane.apiServer.stop();
    await sleep(ms);
    await suite.plane.apiServer.start(60_000);
  };

  it('stops its controllers at once, stays up, and leads again after an outage longer than the lease', async () => {
    await suite.admin.create(Namespace, { metadata: { name: 'lost' } });
    let abortedAt: number | undefined;
    const handled: string[] = [];
    const { manager, logs } = testManager(suite.plane.kubeConfig, {
      namespaces: ['lost'],
      leaderElection: { name: 'lost', namespace: 'lost', identity: 'solo', ...TERMS },
    });
    managers.push(manager);
    manager.add(
      controllerFor(ConfigMap).reconcile(async (req, { signal }) => {
        if (req.name === 'slow' && abortedAt === undefined) {
          // Work that outlives the term: it must be told to stop when the lease is lost.
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          abortedAt ??= Date.now();
          return;
        }
        handled.push(req.name);
      }),
    );
    await manager.start();
    await waitFor('the manager to lead', () => manager.isLeader);
    await suite.admin.create(ConfigMap, { metadata: { name: 'slow', namespace: 'lost' } });
    await sleep(500);

    const downAt = Date.now();
    await suite.plane.apiServer.stop();
    await waitFor('leadership to be given up', () => !manager.isLeader, { timeoutMs: 10_000, intervalMs: 50 });
    const lostAfter = Date.now() - downAt;
    await waitFor('the in-flight reconcile to be told to stop', () => abortedAt, { timeoutMs: 2_000, intervalMs: 50 });
    console.log(`leadership given up ${lostAfter} ms after the API server went away; in-flight work stopped ${abortedAt! - downAt} ms after`);
    expect(lostAfter).toBeLessThanOrEqual(TERMS.renewDeadlineMs + TERMS.retryPeriodMs + 1_000);
    expect(abortedAt! - downAt - lostAfter).toBeLessThan(500);

    await sleep(TERMS.leaseDurationMs * 2);
    await suite.plane.apiServer.start(60_000);
    expect(manager.running).toBe(true);
    await waitFor('the manager to lead again', () => manager.isLeader, { timeoutMs: 30_000 });
    await suite.admin.create(ConfigMap, { metadata: { name: 'after', namespace: 'lost' } });
    await waitFor('new work to be reconciled by the new term', () => handled.includes('after'), { timeoutMs: 15_000 });
    expect(logs.find(/lost the leader lease/).length).toBe(1);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('cancels a renewal at the renew deadline when the API server hangs', async () => {
    await suite.admin.create(Namespace, { metadata: { name: 'hang' } });
    const { manager } = testManager(suite.plane.kubeConfig, {
      namespaces: ['hang'],
      leaderElection: { name: 'hang', namespace: 'hang', identity: 'solo', ...TERMS },
    });
    managers.push(manager);
    manager.add(controllerFor(ConfigMap).reconcile(() => undefined));
    await manager.start();
    await waitFor('the manager to lead', () => manager.isLeader);
    await sleep(1_000);
    const frozenAt = Date.now();
    suite.plane.apiServer.freeze();
    await waitFor('leadership to be given up', () => !manager.isLeader, { timeoutMs: 20_000, intervalMs: 50 });
    const lostAfter = Date.now() - frozenAt;
    console.log(`leadership given up ${lostAfter} ms into the hang (renew deadline ${TERMS.renewDeadlineMs} ms)`);
    // The last renewal came at most one retry period before the hang.
    expect(lostAfter).toBeLessThanOrEqual(TERMS.renewDeadlineMs + 1_000);
    suite.plane.apiServer.thaw();
    await waitFor('the manager to lead again', () => manager.isLeader, { timeoutMs: 30_000 });
    expect(manager.running).toBe(true);
  });

  /**
   * NTP, a suspended VM or `date -s` steps the wall clock. Lease arithmetic must not notice: a
   * forward step must not make a healthy leader give up, and a backward step must not let a leader
   * that cannot renew believe it leads for as long as the step.
   */
  describe('when the wall clock steps on the leader', () => {
    afterEach(() => void vi.useRealTimers());
    const stepWall = (ms: number) => vi.setSystemTime(Date.now() + ms);

    it('keeps leading through a step of an hour forward and back, with no lease transition', async () => {
      await suite.admin.create(Namespace, { metadata: { name: 'step' } });
      const { manager, logs } = testManager(suite.plane.kubeConfig, {
        namespaces: ['step'],
        leaderElection: { name: 'step', namespace: 'step', identity: 'stepped', ...TERMS },
      });
      managers.push(manager);
      manager.add(controllerFor(ConfigMap).reconcile(() => undefined));
      await manager.start();
      await waitFor('the manager to lead', () => manager.isLeader);
      // Only Date is faked (and moves with real time): timers, performance.now() and the API server's clock are real.
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      let lostAt: number | undefined;
      for (const step of [3_600_000, -7_200_000]) {
        stepWall(step);
        const until = performance.now() + TERMS.leaseDurationMs * 2;
        while (performance.now() < until) {
          if (!manager.isLeader) lostAt ??= performance.now();
          await sleep(50);
        }
      }
      expect(lostAt).toBeUndefined();
      // A loss and a re-acquisition can fall between two samples: the log tells.
      expect(logs.find(/lost the leader lease/)).toEqual([]);
      const lease = await suite.admin.get(Lease, { namespace: 'step', name: 'step' });
      expect(lease.spec?.leaseTransitions).toBe(0);
      expect(lease.spec?.holderIdentity).toBe('stepped');
    });

    it('gives up at the renew deadline when the API server hangs right after the clock stepped back an hour', async () => {
      await suite.admin.create(Namespace, { metadata: { name: 'back' } });
      const { manager } = testManager(suite.plane.kubeConfig, {
        namespaces: ['back'],
        leaderElection: { name: 'back', namespace: 'back', identity: 'stepped', ...TERMS },
      });
      managers.push(manager);
      manager.add(controllerFor(ConfigMap).reconcile(() => undefined));
      await manager.start();
      await waitFor('the manager to lead', () => manager.isLeader);
      await sleep(1_000);
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      stepWall(-3_600_000);
      const frozenAt = performance.now();
      suite.plane.apiServer.freeze();
      await waitFor('leadership to be given up', () => !manager.isLeader, { timeoutMs: 20_000, intervalMs: 50 });
      expect(performance.now() - frozenAt).toBeLessThanOrEqual(TERMS.renewDeadlineMs + 1_000);
    });
  });

  it('aborts in-flight work at once when the lease is lost during the graceful drain', async () => {
    await suite.admin.create(Namespace, { metadata: { name: 'drain' } });
    let started = false;
    let abortedAt: number | undefined;
    const { manager } = testManager(suite.plane.kubeConfig, {
      namespaces: ['drain'],
      leaderElection: { name: 'drain', namespace: 'drain', identity: 'draining', ...TERMS },
      gracefulShutdownTimeoutMs: 30_000,
    });
    managers.push(manager);
    manager.add(
      controllerFor(ConfigMap).reconcile(async (_, { signal }) => {
        started = true;
        // Long work that would write at its end: it must stop when another replica may lead.
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        abortedAt ??= performance.now();
      }),
    );
    await manager.start();
    await waitFor('the manager to lead', () => manager.isLeader);
    await suite.admin.create(ConfigMap, { metadata: { name: 'long', namespace: 'drain' } });
    await waitFor('the reconcile to be in flight', () => started);
    const stopping = manager.stop();
    // Another replica takes the lease over while this one drains (here: by hand, as an expired lease would be).
    const lease = await suite.admin.get(Lease, { namespace: 'drain', name: 'drain' });
    const takenAt = performance.now();
    await suite.admin.update(Lease, {
      ...lease,
      spec: { ...lease.spec, holderIdentity: 'other', renewTime: new Date().toISOString().replace('Z', '000Z') },
    } as never);
    await waitFor('the in-flight reconcile to be told to stop', () => abortedAt, { timeoutMs: 20_000, intervalMs: 50 });
    // Within the renew deadline of the takeover, not at the end of the 30 s drain.
    expect(abortedAt! - takenAt).toBeLessThanOrEqual(TERMS.renewDeadlineMs + TERMS.retryPeriodMs + 1_000);
    await stopping;
  });

  it('never lets two replicas write around a lease change (audit log)', async () => {
    await suite.admin.create(Namespace, { metadata: { name: 'two' } });
    await suite.admin.create(ConfigMap, { metadata: { name: 'counter', namespace: 'two' }, data: { n: '0' } });
    const replica = async (user: string) => {
      const creds = await suite.plane.userCredentials(user, ['system:masters']);
      const { manager } = testManager(creds.kubeConfig, {
        name: user,
        namespaces: ['two'],
        leaderElection: { name: 'two', namespace: 'two', identity: user, ...TERMS },
      });
      // A leader writes all the time, so any overlap between two leaders shows in the audit log.
      manager.add(
        controllerFor(ConfigMap).reconcile(async (req, ctx) => {
          await ctx.patch(ConfigMap, { namespace: 'two', name: req.name }, { metadata: { annotations: { 'written-by': user, at: String(Date.now()) } } });
          return { requeueAfter: 100 };
        }),
      );
      managers.push(manager);
      await manager.start();
      return manager;
    };
    const since = new Date();
    const a = await replica('replica-a');
    await waitFor('replica A to lead', () => a.isLeader);
    const b = await replica('replica-b');
    await sleep(1_000);
    await outage(TERMS.leaseDurationMs * 2);
    await waitFor('a leader after the outage', () => a.isLeader || b.isLeader, { timeoutMs: 30_000 });
    await sleep(2_000);
    // Hand over once more, gracefully, and let the new leader write.
    const leader = a.isLeader ? a : b;
    const other = leader === a ? b : a;
    await leader.stop();
    await waitFor('the other replica to take over', () => other.isLeader, { timeoutMs: 30_000 });
    await sleep(2_000);

    const writes = suite.plane
      .audit!.writes({ since, resource: 'configmaps' })
      .filter((e) => e.objectRef?.namespace === 'two' && e.responseStatus?.code === 200);
    const runs: string[] = [];
    for (const w of writes.sort((x, y) => Date.parse(x.requestReceivedTimestamp) - Date.parse(y.requestReceivedTimestamp))) {
      if (runs.at(-1) !== w.user.username) runs.push(w.user.username);
    }
    const lease = await suite.admin.get(Lease, { namespace: 'two', name: 'two' });
    console.log(`writers in order: ${runs.join(' → ')}; lease transitions ${lease.spec?.leaseTransitions}`);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    // Each change of writer needs a lease transition: no interleaving of two leaders.
    expect(runs.length - 1).toBeLessThanOrEqual(lease.spec?.leaseTransitions ?? 0);
    // Stronger, write by write: as the API server saw it, the last lease written before each
    // ConfigMap write was the writer's own (no write after another replica took the lease).
    const leaseWrites = suite.plane
      .audit!.writes({ since, resource: 'leases' })
      .filter((e) => e.objectRef?.namespace === 'two' && e.objectRef?.name === 'two' && (e.responseStatus?.code ?? 0) < 300);
    const holderAt = (t: number) => leaseWrites.filter((l) => Date.parse(l.requestReceivedTimestamp) <= t).at(-1)?.user.username;
    const stale = writes
      .filter((w) => holderAt(Date.parse(w.requestReceivedTimestamp)) !== w.user.username)
      .map((w) => `${w.user.username} wrote at ${w.requestReceivedTimestamp} while ${holderAt(Date.parse(w.requestReceivedTimestamp))} held the lease`);
    expect(stale).toEqual([]);
    expect(a.running || b.running).toBe(true);
  });
});
