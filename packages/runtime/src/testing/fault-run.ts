import type { KubeConfig } from '@kubernetes/client-node';
import {
  maxWritesPerObjectPerMinute,
  operatorWrites,
  startFaultProxy,
  waitFor,
  writesByNonLeaders,
  type ControlPlane,
  type FaultProxy,
  type FaultRates,
  type AuditEvent,
} from '@opkit/testing';
import { writesOutsideShards, type OutsideWrite } from './shard-writes.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Manager, ManagerOptions } from '../manager/manager.js';
import { everyReplicaFieldManager } from '../webhook/serving-certificates.js';
import { testManager } from './harness.js';

/** Leader-election terms short enough that a test sees leadership change hands under faults. */
export const FAULT_TERMS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };

export interface FaultRunOptions {
  /** A control plane started with `audit: true`: the invariants are read from its audit log. */
  plane: ControlPlane;
  seed: number;
  /** The operator's name: its user agent's prefix and its Lease's name. */
  name: string;
  /** Where the Lease lives. */
  leaseNamespace: string;
  /** Replicas, each a manager behind its own proxy (default 2). */
  replicas?: number;
  /** Manager options per replica (namespaces, webhooks, …); leader election is set here. */
  manager?: (replica: number) => Partial<ManagerOptions>;
  /** Adds the operator's controllers to a replica's manager, as its main.ts does. */
  install(manager: Manager, replica: number, kubeConfig: KubeConfig): void | Promise<void>;
  /** One change, made by an admin (not through the proxies), while the faults go on. */
  churn(step: number): Promise<void>;
  /** How long the changes go on (default OPKIT_FAULT_CHURN_MS, else 20 s), and the pause between two (default 250 ms). */
  churnMs?: number;
  churnIntervalMs?: number;
  /** True once every object matches its spec; may throw to say what lags (shown on timeout). */
  converged(): Promise<boolean>;
  /** The bound on convergence once the faults stop (default 60 s). */
  convergeTimeoutMs?: number;
  rates?: Partial<FaultRates>;
  /**
   * Run the replicas as a shard ring (ManagerOptions.sharding, ring `name` in `leaseNamespace`)
   * instead of electing a leader; the split-brain check is then writesOutsideShards, placing each
   * audited write with `placeOf` (its primary object's uid hashed).
   */
  sharded?: { placeOf(e: AuditEvent): bigint | undefined };
}

export interface FaultRunReport {
  seed: number;
  /** Per replica: requests seen and faults injected, by kind. */
  injected: FaultProxy['stats'][];
  /** From the faults stopping to every object converged. */
  convergedMs: number;
  /** Every write the operator sent (successful or not), and the most one object got in a minute. */
  writes: number;
  burst: { writes: number; object?: string };
  /**
   * Writes by a replica the Lease did not name at the time (must be none; the webhook certificates'
   * excepted), or, sharded, writes outside the assignment of their moment.
   */
  splitBrain: (ReturnType<typeof writesByNonLeaders>[number] | OutsideWrite)[];
  /** The worst event-loop delay of this process over the run. */
  lagMaxMs: number;
}

/**
 * One operator's fault run, made once and used by its test (a short churn, two seeds) and by the
 * soak bench (a long churn, more seeds): the objects it made, how it churns them, what converged
 * means, and the bound on writes (per minute, so it holds for any length of churn).
 */
export interface FaultScenario {
  run: Omit<FaultRunOptions, 'plane' | 'seed'>;
  /** The most writes one object may take in a minute while faults go on, and why so many. */
  maxWritesPerObjectPerMinute: number;
}

/** The seeds to run: OPKIT_FAULT_SEEDS (comma-separated) replays chosen ones, else `defaults`. */
export function faultSeeds(defaults: number[]): number[] {
  const env = process.env['OPKIT_FAULT_SEEDS'];
  return env
    ? env
        .split(',')
        .map((s) => Number(s.trim()))
        .filter(Number.isInteger)
    : defaults;
}

/**
 * The operator as a user's cluster runs it (replicas with leader election) with each replica's
 * API traffic through a fault-injecting proxy on a seeded schedule, while an admin changes objects.
 * Then the faults stop and the run waits for every object to converge. Returns what the audit log
 * and the proxies saw; `assertFaultInvariants` judges it. Every replica is stopped on return.
 *
 * A failure names its seed and the command that replays it: the same seed gives each request the
 * same fault, though the interleaving of requests (and so the whole run) is the machine's.
 */
export async function runUnderFaults(o: FaultRunOptions, replay: string): Promise<FaultRunReport> {
  const audit = o.plane.audit;
  if (!audit) throw new Error('runUnderFaults needs a control plane started with audit: true');
  const since = new Date();
  const proxies: FaultProxy[] = [];
  const managers: Manager[] = [];
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  try {
    for (let r = 0; r < (o.replicas ?? 2); r++) {
      const proxy = await startFaultProxy({ upstream: o.plane.kubeConfig, seed: o.seed * 100 + r, rates: o.rates });
      proxies.push(proxy);
      const kc = proxy.kubeConfig();
      const { manager } = testManager(kc, {
        name: o.name,
        ...o.manager?.(r),
        ...(o.sharded
          ? { sharding: { ring: o.name, namespace: o.leaseNamespace, timing: FAULT_TERMS } }
          : { leaderElection: { name: o.name, namespace: o.leaseNamespace, ...FAULT_TERMS } }),
      });
      managers.push(manager);
      await o.install(manager, r, kc);
      await manager.start();
    }
    const until = performance.now() + (o.churnMs ?? faultChurnMs());
    for (let i = 0; performance.now() < until; i++) {
      await o.churn(i);
      await new Promise((r) => setTimeout(r, o.churnIntervalMs ?? 250));
    }
    for (const p of proxies) p.faults(false);
    const stoppedAt = performance.now();
    await waitFor('every object converged after the faults stopped', o.converged, { timeoutMs: o.convergeTimeoutMs ?? 60_000, intervalMs: 250 });
    const convergedMs = Math.round(performance.now() - stoppedAt);
    const writes = operatorWrites(audit, `${o.name}/`, since);
    return {
      seed: o.seed,
      injected: proxies.map((p) => ({ ...p.stats, byKind: { ...p.stats.byKind } })),
      convergedMs,
      writes: writes.length,
      burst: maxWritesPerObjectPerMinute(writes),
      splitBrain: o.sharded
        ? writesOutsideShards(audit.query({ since }), {
            userAgent: `${o.name}/opkit`,
            assignment: { namespace: o.leaseNamespace, name: `${o.name}-shards` },
            placeOf: o.sharded.placeOf,
          })
        : writesByNonLeaders(audit, {
            userAgent: `${o.name}/`,
            lease: { namespace: o.leaseNamespace, name: o.name },
            since,
            everyReplicaFieldManagers: [everyReplicaFieldManager(o.name)],
          }),
      lagMaxMs: Math.round(lag.max / 1e6),
    };
  } catch (err) {
    const stats = proxies.map((p) => `${p.stats.injected}/${p.stats.requests}`).join(', ');
    throw new Error(`seed ${o.seed} (faults ${stats}): ${(err as Error).message}\nreplay: ${replay}`, { cause: err });
  } finally {
    lag.disable();
    await Promise.all(managers.map((m) => m.stop()));
    await Promise.all(proxies.map((p) => p.stop()));
  }
}

/** How long a run churns: OPKIT_FAULT_CHURN_MS (the soak bench sets minutes), else 20 s. */
export function faultChurnMs(): number {
  const v = Number(process.env['OPKIT_FAULT_CHURN_MS']);
  return Number.isFinite(v) && v > 0 ? v : 20_000;
}

/** One line per run: the faults, the convergence, the writes, the lag. */
export function describeFaultRun(r: FaultRunReport): string {
  const faults = r.injected
    .map(
      (s) =>
        `${s.injected}/${s.requests} (${Object.entries(s.byKind)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')})`,
    )
    .join('; ');
  return `seed ${r.seed}: faults ${faults}; converged ${r.convergedMs} ms after they stopped; ${r.writes} writes, at most ${r.burst.writes} a minute to ${r.burst.object ?? 'one object'}; worst event-loop lag ${r.lagMaxMs} ms`;
}

/**
 * The invariants every operator keeps under faults: nothing written by a replica the Lease did not
 * name, writes per object per minute bounded, and faults actually injected on every replica (a run
 * without faults proves nothing). Convergence within the bound was checked by the run itself.
 */
export function assertFaultInvariants(r: FaultRunReport, bounds: { maxWritesPerObjectPerMinute: number }, replay: string): void {
  const broken: string[] = [];
  if (r.splitBrain.length) broken.push(`writes by a replica that did not lead, or outside its shard: ${JSON.stringify(r.splitBrain.slice(0, 3))}`);
  if (r.burst.writes > bounds.maxWritesPerObjectPerMinute)
    broken.push(`${r.burst.writes} writes a minute to ${r.burst.object} (bound ${bounds.maxWritesPerObjectPerMinute})`);
  const idle = r.injected.findIndex((s) => s.injected === 0);
  if (idle >= 0) broken.push(`replica ${idle} saw no fault: the schedule proved nothing`);
  if (broken.length) throw new Error(`seed ${r.seed}: ${broken.join('; ')}\nreplay: ${replay}`);
}
