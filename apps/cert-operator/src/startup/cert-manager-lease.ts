import { Lease, type ObjectOf, type ReadClient } from '@opkit/runtime';

/**
 * cert-manager's controller elects its leader through this Lease (its `--leader-election-namespace`
 * defaults to kube-system). While a cert-manager controller holds it, opkit in cert-manager mode
 * must not start: both would reconcile the same Certificates and re-issue over each other.
 */
export const CERT_MANAGER_LEASE = { namespace: 'kube-system', name: 'cert-manager-controller' } as const;

/**
 * A holder's clock and ours may differ: a Lease renewed this little past its duration (by our
 * clock) still counts as held, rather than let a late renewal look like an abandoned Lease.
 */
export const CLOCK_SKEW_MS = 5_000;

type LeaseObject = ObjectOf<typeof Lease>;

export type LeaseVerdict = { held: false; why: string } | { held: true; holder: string; renewedAgoMs: number; expiresInMs: number };

/**
 * Is the Lease held now (pure, table-tested)? Held: a holder named and its last renewal within
 * the lease duration (plus skew). Released (client-go empties the holder when it lets go), expired
 * (a controller that died or was scaled to zero without releasing), or absent: not held.
 * `renewTime` is the holder's wall clock, so it is compared with ours, the one place wall-clock
 * time is the right one to read.
 */
export function leaseVerdict(lease: Pick<LeaseObject, 'spec'> | undefined, nowWallMs: number): LeaseVerdict {
  if (!lease) return { held: false, why: 'no Lease' };
  const holder = lease.spec?.holderIdentity;
  if (!holder) return { held: false, why: 'released (no holder)' };
  const renewed = Date.parse(String(lease.spec?.renewTime ?? lease.spec?.acquireTime ?? ''));
  if (Number.isNaN(renewed)) return { held: false, why: `held by "${holder}" but never renewed` };
  const durationMs = (lease.spec?.leaseDurationSeconds ?? 15) * 1_000;
  const expiresInMs = renewed + durationMs + CLOCK_SKEW_MS - nowWallMs;
  if (expiresInMs <= 0) return { held: false, why: `expired ${Math.round(-expiresInMs / 1_000)} s ago (last holder "${holder}")` };
  return { held: true, holder, renewedAgoMs: Math.max(0, nowWallMs - renewed), expiresInMs };
}

/**
 * The startup check of cert-manager mode: refuses (throws, so the operator exits saying why)
 * while cert-manager's controller holds its Lease, or when the Lease cannot be read (the chart
 * grants `get` on it: not knowing is not permission).
 */
export async function refuseWhileCertManagerLeads(
  client: ReadClient,
  where: { namespace: string; name: string },
  nowWallMs: number,
): Promise<Extract<LeaseVerdict, { held: false }>> {
  let lease: LeaseObject | undefined;
  try {
    lease = await client.find(Lease, where);
  } catch (err) {
    throw new Error(
      `cannot read cert-manager's leader Lease ${where.namespace}/${where.name} to know whether its controller still runs: ${(err as Error).message}. ` +
        `Grant get on leases there (the chart does, leaderElection.certManagerLease), or point --cert-manager-lease-namespace at cert-manager's --leader-election-namespace`,
    );
  }
  const verdict = leaseVerdict(lease, nowWallMs);
  if (verdict.held)
    throw new Error(
      `cert-manager's controller holds its leader Lease ${where.namespace}/${where.name} (holder "${verdict.holder}", renewed ${Math.round(verdict.renewedAgoMs / 1_000)} s ago): ` +
        `refusing to serve cert-manager.io beside it, or the two would re-issue every Certificate over each other. ` +
        `Scale cert-manager's controller to zero first (kubectl -n cert-manager scale deployment cert-manager --replicas=0); see docs/cert-operator.md "Replacing cert-manager"`,
    );
  return verdict;
}
