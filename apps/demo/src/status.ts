import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { RunningPod } from '@opkit/testing';
import type { Row } from './table.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Obj {
  metadata: { name: string; namespace?: string };
  spec?: Record<string, any>;
  status?: Record<string, any> & { conditions?: Condition[] };
}

const cond = (o: Obj, type: string) => o.status?.conditions?.find((c) => c.type === type);
const id = (o: Obj) => `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/** Reads what the demo shows: the operators' pods and every sample resource, with their status. */
export function statusReader(kubeConfig: KubeConfig, releases: { release: string; namespace: string }[], pods: () => RunningPod[]) {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const list = async (group: string, version: string, plural: string): Promise<Obj[]> => {
    try {
      return ((await api.listClusterCustomObject({ group, version, plural })) as { items: Obj[] }).items;
    } catch {
      return []; // the CRD is not installed yet
    }
  };

  return async function rows(): Promise<Row[]> {
    const out: Row[] = [];
    for (const r of releases) {
      const mine = pods().filter((p) => p.namespace === r.namespace && p.name.startsWith(`${r.release}-`));
      const ready = mine.filter((p) => p.ready);
      // The chart's metrics port: HTTPS, for a caller with a token bound to <release>-metrics-reader.
      const [first] = ready;
      const metrics = first && Object.entries(first.ports).find(([container]) => container === '8443')?.[1];
      out.push({
        kind: 'Operator',
        name: `${r.namespace}/${r.release}`,
        status: first ? 'Ready' : mine.length ? 'Starting' : 'NoPod',
        detail: first ? `pid ${first.pid}, metrics https://127.0.0.1:${metrics}/metrics${first.restarts ? `, ${first.restarts} restarts` : ''}` : '',
        done: ready.length > 0,
      });
    }
    for (const m of await list('cache.opkit.dev', 'v1beta1', 'memcacheds')) {
      const phase = m.status?.phase ?? 'Pending';
      const readyN = m.status?.readyReplicas ?? 0;
      out.push({
        kind: 'Memcached',
        name: id(m),
        status: phase,
        detail: `${readyN}/${m.spec?.replicas} ready`,
        done: phase === 'Available' && readyN === m.spec?.replicas,
      });
    }
    for (const c of await list('cdn.opkit.dev', 'v1', 'cdnclusters')) {
      const state = c.status?.state ?? 'Pending';
      const sources = (c.status?.upstreams ?? []).map((u: { name: string; ready: boolean }) => `${u.name}${u.ready ? '' : ' (down)'}`).join(', ');
      out.push({
        kind: 'CdnCluster',
        name: id(c),
        status: state,
        detail: c.status?.message || (sources ? `routes to ${sources}` : (c.spec?.role ?? '')),
        done: state === 'Running',
      });
    }
    for (const [plural, kind] of [
      ['clusterissuers', 'ClusterIssuer'],
      ['issuers', 'Issuer'],
    ] as const) {
      for (const i of await list('cert.opkit.dev', 'v1', plural)) {
        const ready = cond(i, 'Ready');
        out.push({
          kind,
          name: id(i),
          status: ready?.status === 'True' ? 'Ready' : (ready?.reason ?? 'Pending'),
          detail: ready?.message ?? '',
          done: ready?.status === 'True',
        });
      }
    }
    for (const c of await list('cert.opkit.dev', 'v1', 'certificates')) {
      const ready = cond(c, 'Ready');
      const issuing = cond(c, 'Issuing');
      const ok = ready?.status === 'True';
      out.push({
        kind: 'Certificate',
        name: id(c),
        status: ok ? 'Ready' : issuing?.status === 'True' ? 'Issuing' : (ready?.reason ?? 'Pending'),
        detail: ok ? `valid until ${c.status?.notAfter}, renews ${c.status?.renewalTime}` : (issuing?.message ?? ready?.message ?? ''),
        done: ok,
      });
    }
    // ACME progress, while it lasts.
    for (const ch of await list('acme.cert.opkit.dev', 'v1', 'challenges')) {
      out.push({
        kind: 'Challenge',
        name: id(ch),
        status: ch.status?.state ?? 'new',
        detail: `${ch.spec?.dnsName}: ${ch.status?.reason ?? ''}`,
        done: ch.status?.state === 'valid',
      });
    }
    return out;
  };
}

/** Converged: every sample resource and operator is where it should end up. */
export const converged = (rows: Row[]) => rows.filter((r) => r.kind !== 'Challenge').every((r) => r.done) && rows.some((r) => r.kind === 'Certificate');
