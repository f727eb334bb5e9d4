import { KubeConfig } from '@kubernetes/client-node';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { helmHomeEnv } from '../helm/chart.js';
import { freePort } from '../net/ports.js';
import { createCertificateAuthority, type CertificateAuthority } from '../pki/pki.js';
import type { ManagedProcess } from '../process/managed-process.js';
import { guardDir, releaseDir } from '../process/watchdog.js';
import { run, type RunOptions, type RunResult } from '../run.js';
import { StopWaiting, waitFor } from '../wait.js';
import { adminRequest, AdminRequestError, type AdminClientConfig } from './admin-client.js';
import { APIServer } from './apiserver.js';
import { AuditLog } from './audit.js';
import { controllerManager } from './controller-manager.js';
import { Etcd } from './etcd.js';
import { renderKubeconfig } from './kubeconfig.js';
import { kwok, kwokNode } from './kwok.js';
import { scheduler } from './scheduler.js';

export interface ControlPlaneOptions {
  /**
   * Run kube-controller-manager, kube-scheduler and kwok with this many simulated nodes, so
   * Deployments get pods that reach Running and owned objects are garbage-collected.
   */
  nodes?: number;
  /** Run kube-controller-manager without nodes (garbage collection, namespace deletion, default ServiceAccounts). */
  controllerManager?: boolean;
  /** Record every request in an audit log (see {@link ControlPlane.audit}). */
  audit?: boolean;
  /** Per-component start timeout. Default 60 s, or OPKIT_CONTROLPLANE_START_TIMEOUT (ms). */
  startTimeoutMs?: number;
  /** Extra kube-apiserver flags. */
  apiServerArgs?: string[];
}

export interface UserCredentials {
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
}

export interface ControlPlane {
  /** Admin (system:masters) access. */
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
  server: string;
  /** Working directory: certificates, kubeconfigs and each component's log. Removed by stop(). */
  dir: string;
  etcd: Etcd;
  apiServer: APIServer;
  audit?: AuditLog;
  nodes: string[];
  /** How long each phase of start took, in ms. */
  timings: Record<string, number>;
  kubectl(args: string[], opts?: RunOptions): Promise<RunResult>;
  helm(args: string[], opts?: RunOptions): Promise<RunResult>;
  /** Credentials for any user name and groups, signed by the plane's client CA. */
  userCredentials(user: string, groups?: string[]): Promise<UserCredentials>;
  /** Credentials for a ServiceAccount, from a TokenRequest (the account must exist). */
  serviceAccountCredentials(namespace: string, name: string, expirationSeconds?: number): Promise<UserCredentials>;
  /**
   * Restarts kube-controller-manager, kube-scheduler and kwok. After an API server outage longer
   * than their leases, a real cluster's controller manager and scheduler exit (leader election) and
   * the kubelet restarts them at once; ours run without leader election, and would otherwise sit out
   * client-go's reconnect backoff (up to 30 s, jittered) before noticing the API server is back.
   */
  restartClusterComponents(): Promise<void>;
  /** Stops every process, then removes the working directory and etcd's data. Idempotent. */
  stop(): Promise<void>;
}

const envTimeout = () => Number(process.env.OPKIT_CONTROLPLANE_START_TIMEOUT) || 60_000;

/**
 * Starts a real control plane on free loopback ports: etcd and kube-apiserver with secure serving,
 * client-certificate authentication and RBAC; optionally kube-controller-manager, kube-scheduler and
 * kwok. Processes are guarded by a watchdog, so a crashed or killed test run leaves nothing behind.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const timeout = options.startTimeoutMs ?? envTimeout();
  const simulated = (options.nodes ?? 0) > 0;
  const dir = mkdtempSync(join(tmpdir(), 'opkit-cp-'));
  guardDir(dir);
  const timings: Record<string, number> = {};
  const t0 = Date.now();
  const mark = (phase: string, since: number) => (timings[phase] = Date.now() - since);

  const etcd = new Etcd(dir);
  const processes: ManagedProcess[] = [];
  let apiServer: APIServer | undefined;
  let stopped = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const p of [...processes].reverse()) await p.stop(5_000);
    await apiServer?.stop();
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
    releaseDir(dir);
  };

  try {
    // Certificates: one CA for serving, one for client authentication, one for the aggregation
    // layer, a ServiceAccount key pair.
    let t = Date.now();
    const servingCa = await createCertificateAuthority('opkit-serving-ca');
    const clientCa = await createCertificateAuthority('opkit-client-ca');
    const serving = await servingCa.issue({
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
      ipAddresses: ['127.0.0.1', '10.96.0.1'],
    });
    const admin = await clientCa.issue({ commonName: 'admin', organizations: ['system:masters'], usage: 'client' });
    // The aggregation layer (APIServices served by extension API servers, such as cert-manager's
    // DNS-01 webhook solvers): a CA of its own, as kubeadm's front-proxy-ca.
    const frontProxyCa = await createCertificateAuthority('opkit-front-proxy-ca');
    const frontProxy = { ca: frontProxyCa.cert, ...(await frontProxyCa.issue({ commonName: 'front-proxy-client', usage: 'client' })) };
    const sa = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    mark('pki', t);

    t = Date.now();
    await etcd.start(timeout);
    mark('etcd', t);

    t = Date.now();
    const port = await freePort();
    apiServer = new APIServer({
      workDir: dir,
      etcdUrl: etcd.clientUrl,
      port,
      servingCert: serving.cert,
      servingKey: serving.key,
      servingCa: servingCa.cert,
      clientCa: clientCa.cert,
      serviceAccountPublicKey: sa.publicKey,
      serviceAccountPrivateKey: sa.privateKey,
      serviceAccountAdmission: simulated || !!options.controllerManager,
      probeClient: admin,
      frontProxy,
      auditLogPath: options.audit ? join(dir, 'audit.log') : undefined,
      extraArgs: options.apiServerArgs,
    });
    await apiServer.start(timeout);
    const server = apiServer.url;
    const adminCfg: AdminClientConfig = { server, ca: servingCa.cert, cert: admin.cert, key: admin.key };
    await waitFor('the default namespace', () => adminRequest(adminCfg, 'GET', '/api/v1/namespaces/default').then(() => true), { timeoutMs: timeout });
    mark('apiserver', t);

    const writeKubeconfig = (file: string, user: { name: string; cert?: string; key?: string; token?: string }) => {
      const path = join(dir, file);
      writeFileSync(path, renderKubeconfig(server, servingCa.cert, user), { mode: 0o600 });
      return path;
    };
    const kubeconfigPath = writeKubeconfig('kubeconfig', { name: 'admin', ...admin });
    const componentKubeconfig = async (file: string, cn: string, orgs: string[] = []) =>
      writeKubeconfig(file, { name: cn, ...(await clientCa.issue({ commonName: cn, organizations: orgs, usage: 'client' })) });

    const nodes: string[] = [];
    if (simulated || options.controllerManager) {
      t = Date.now();
      const files = { servingCa: join(dir, 'serving-ca.crt'), serviceAccountKey: join(dir, 'sa.key') };
      writeFileSync(files.servingCa, servingCa.cert);
      const kcm = controllerManager(dir, await componentKubeconfig('kcm.kubeconfig', 'system:kube-controller-manager'), files);
      processes.push(kcm);
      kcm.start();
      if (simulated) {
        const sched = await scheduler(dir, await componentKubeconfig('scheduler.kubeconfig', 'system:kube-scheduler'));
        processes.push(sched);
        sched.start();
        // kwok acts for every simulated kubelet; it needs node and pod status rights across the cluster.
        const kw = await kwok(dir, await componentKubeconfig('kwok.kubeconfig', 'kwok', ['system:masters']));
        processes.push(kw);
        kw.start();
        for (let i = 0; i < (options.nodes ?? 0); i++) {
          const name = `kwok-node-${i}`;
          await adminRequest(adminCfg, 'POST', '/api/v1/nodes', kwokNode(name));
          nodes.push(name);
        }
        await waitFor(
          `${nodes.length} kwok nodes to be Ready`,
          async () => {
            for (const p of processes) if (!p.running) throw new StopWaiting(`${p.options.name} exited:\n${p.recentOutput()}`);
            const list = await adminRequest<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>(adminCfg, 'GET', '/api/v1/nodes');
            const ready = list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
            return ready >= nodes.length || false;
          },
          { timeoutMs: timeout },
        );
      }
      // Pods are refused until the namespace's default ServiceAccount exists.
      await waitFor(
        'the default ServiceAccount (kube-controller-manager running)',
        async () => {
          if (!kcm.running) throw new StopWaiting(`kube-controller-manager exited:\n${kcm.recentOutput()}`);
          return adminRequest(adminCfg, 'GET', '/api/v1/namespaces/default/serviceaccounts/default').then(() => true);
        },
        { timeoutMs: timeout },
      );
      mark('controllers', t);
    }
    timings.total = Date.now() - t0;

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const tool =
      (bin: 'kubectl' | 'helm') =>
      (args: string[], opts: RunOptions = {}) =>
        run(findBinary(bin), bin === 'kubectl' ? [`--kubeconfig=${kubeconfigPath}`, ...args] : args, {
          ...opts,
          env: {
            ...process.env,
            KUBECONFIG: kubeconfigPath,
            ...helmHomeEnv(join(dir, 'helm')),
            ...opts.env,
          },
        });

    let userSeq = 0;
    const credentials = (path: string): UserCredentials => {
      const kc = new KubeConfig();
      kc.loadFromFile(path);
      return { kubeConfig: kc, kubeconfigPath: path };
    };

    return {
      kubeConfig,
      kubeconfigPath,
      server,
      dir,
      etcd,
      apiServer,
      audit: options.audit ? new AuditLog(join(dir, 'audit.log')) : undefined,
      nodes,
      timings,
      async restartClusterComponents() {
        for (const p of processes) {
          await p.stop(5_000);
          p.start();
        }
      },
      kubectl: tool('kubectl'),
      helm: tool('helm'),
      async userCredentials(user, groups = []) {
        const pair = await clientCa.issue({ commonName: user, organizations: groups, usage: 'client' });
        return credentials(writeKubeconfig(`user-${++userSeq}.kubeconfig`, { name: user, ...pair }));
      },
      async serviceAccountCredentials(namespace, name, expirationSeconds = 3600) {
        const tr = await adminRequest<{ status: { token: string } }>(adminCfg, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds },
        });
        return credentials(writeKubeconfig(`sa-${++userSeq}.kubeconfig`, { name: `system:serviceaccount:${namespace}:${name}`, token: tr.status.token }));
      },
      stop,
    };
  } catch (err) {
    const detail = err instanceof AdminRequestError || err instanceof Error ? err.message : String(err);
    await stop().catch(() => undefined);
    throw new Error(`control plane failed to start: ${detail}`, { cause: err });
  }
}

export type { CertificateAuthority };
