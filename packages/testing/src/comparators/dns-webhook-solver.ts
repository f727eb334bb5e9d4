import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { buildToolset } from '../assets/build-toolset.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { freePort } from '../net/ports.js';
import { createCertificateAuthority } from '../pki/pki.js';
import { ManagedProcess } from '../process/managed-process.js';
import { StopWaiting, waitFor } from '../wait.js';

/** A cert-manager DNS-01 webhook solver registered with the API server's aggregation layer. */
export interface DnsWebhookSolver {
  /** The API group it serves (an issuer's `dns01.webhook.groupName`). */
  groupName: string;
  /** The solver's name in that group (`dns01.webhook.solverName`): cert-manager's RFC 2136 solver. */
  solverName: 'rfc2136';
  process: ManagedProcess;
  /** Removes its APIService and stops it. */
  stop(): Promise<void>;
}

/**
 * Builds the solver once, with cert-manager's controller (tools/control-plane/go/cert-manager/
 * dns-webhook: cert-manager's webhook server framework around its RFC 2136 solver; with progress
 * lines), then registers it as a DNS webhook solver is deployed in a cluster: its own identity with the RBAC cert-manager's solver charts grant (delegated
 * authentication and authorization, Secrets read for its config's TSIG key), an APIService
 * `v1alpha1.<groupName>` with the CA of its serving certificate. The API server reaches it through
 * an ExternalName Service naming `localhost` (there is no kube-proxy here; the aggregator dials an
 * ExternalName service's name) and checks its certificate for `<service>.<namespace>.svc`, as in a
 * cluster. Resolves once the APIService is Available.
 */
export async function startDnsWebhookSolver(plane: ControlPlane, opts: { groupName: string; namespace?: string }): Promise<DnsWebhookSolver> {
  await buildToolset(['--only', 'cert-manager'], '[cert-manager]');
  const { groupName } = opts;
  const namespace = opts.namespace ?? 'dns-webhook';
  const service = 'rfc2136-solver';
  const user = `dns-webhook-${groupName}`;
  const apply = (...items: object[]) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  const rbac = 'rbac.authorization.k8s.io';
  const binding = (kind: string, name: string, role: { kind: string; name: string }, namespace?: string) => ({
    apiVersion: `${rbac}/v1`,
    kind,
    metadata: { name, namespace },
    roleRef: { apiGroup: rbac, ...role },
    subjects: [{ kind: 'User', name: user, apiGroup: rbac }],
  });
  // Its namespace and identity in one apply: delegated authentication and authorization, and the
  // Secrets its config names (read through its own informer).
  await apply(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    binding('ClusterRoleBinding', `${user}:auth-delegator`, { kind: 'ClusterRole', name: 'system:auth-delegator' }),
    binding('RoleBinding', `${user}:auth-reader`, { kind: 'Role', name: 'extension-apiserver-authentication-reader' }, 'kube-system'),
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: `${user}:secret-reader` },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
    },
    binding('ClusterRoleBinding', `${user}:secret-reader`, { kind: 'ClusterRole', name: `${user}:secret-reader` }),
  );
  const identity = await plane.userCredentials(user);

  const ca = await createCertificateAuthority('dns-webhook-solver-ca');
  const serving = await ca.issue({ commonName: service, usage: 'server', dnsNames: [`${service}.${namespace}.svc`, 'localhost'], ipAddresses: ['127.0.0.1'] });
  const file = (name: string, content: string) => {
    const p = join(plane.dir, `dns-webhook-${name}`);
    writeFileSync(p, content, { mode: 0o600 });
    return p;
  };
  const port = await freePort();
  const proc = new ManagedProcess({
    name: 'cert-manager-dns-webhook',
    command: findBinary('cert-manager-dns-webhook'),
    args: [
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--tls-cert-file=${file('tls.crt', serving.cert)}`,
      `--tls-private-key-file=${file('tls.key', serving.key)}`,
      `--kubeconfig=${identity.kubeconfigPath}`,
      `--authentication-kubeconfig=${identity.kubeconfigPath}`,
      `--authorization-kubeconfig=${identity.kubeconfigPath}`,
    ],
    env: { ...process.env, GROUP_NAME: groupName },
    logFile: join(plane.dir, 'cert-manager-dns-webhook.log'),
  });
  proc.start();

  const apiService = `v1alpha1.${groupName}`;
  await apply(
    { apiVersion: 'v1', kind: 'Service', metadata: { name: service, namespace }, spec: { type: 'ExternalName', externalName: 'localhost' } },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: apiService },
      spec: {
        group: groupName,
        version: 'v1alpha1',
        service: { namespace, name: service, port },
        caBundle: Buffer.from(ca.cert).toString('base64'),
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    },
  );
  await waitFor(
    `APIService ${apiService} Available`,
    async () => {
      if (!proc.running) throw new StopWaiting(`the DNS webhook solver exited (${proc.exitCode}):\n${proc.recentOutput()}`);
      const r = await plane.kubectl(['get', 'apiservice', apiService, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}'], { check: false });
      return r.stdout.trim() === 'True';
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return {
    groupName,
    solverName: 'rfc2136',
    process: proc,
    async stop() {
      await plane.kubectl(['delete', 'apiservice', apiService, '--ignore-not-found'], { check: false }).catch(() => undefined);
      await proc.stop(5_000);
    },
  };
}
