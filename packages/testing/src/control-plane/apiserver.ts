import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { hasDefaultRoute } from '../net/routes.js';
import { httpGet } from '../net/probe.js';
import { ManagedProcess } from '../process/managed-process.js';
import { StopWaiting, waitFor } from '../wait.js';

export interface APIServerConfig {
  workDir: string;
  etcdUrl: string;
  port: number;
  servingCert: string;
  servingKey: string;
  servingCa: string;
  clientCa: string;
  serviceAccountPublicKey: string;
  serviceAccountPrivateKey: string;
  /** Keep the ServiceAccount admission plugin (needs kube-controller-manager to create default SAs). */
  serviceAccountAdmission: boolean;
  /** The identity used to probe /readyz (anonymous requests are refused until RBAC is bootstrapped). */
  probeClient: { cert: string; key: string };
  /**
   * The aggregation layer's credentials, as kubeadm sets them up: the CA extension API servers
   * trust for the identity headers the API server forwards, and the client certificate it proxies
   * with (common name front-proxy-client). Without them an APIService is proxied to anonymously.
   */
  frontProxy: { ca: string; cert: string; key: string };
  auditLogPath?: string;
  extraArgs?: string[];
}

/** The audit policy of every API server the tests run (the local control plane's and kind's). */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  # Lease writes with their bodies: a shard ring's assignment (an annotation) at each version, in
  # the API server's own order, for the specs that check who was allowed to write what when.
  - level: RequestResponse
    verbs: ["create", "update"]
    resources:
      - group: coordination.k8s.io
        resources: ["leases"]
  - level: Metadata
`;

/** kube-apiserver with secure serving only, client-certificate authentication and RBAC. */
export class APIServer {
  private proc?: ManagedProcess;
  readonly url: string;

  constructor(private readonly cfg: APIServerConfig) {
    this.url = `https://127.0.0.1:${cfg.port}`;
  }

  private args(): string[] {
    const c = this.cfg;
    const f = (name: string, content: string) => {
      const p = join(c.workDir, name);
      writeFileSync(p, content, { mode: 0o600 });
      return p;
    };
    const args = [
      `--etcd-servers=${c.etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${c.port}`,
      `--tls-cert-file=${f('apiserver.crt', c.servingCert)}`,
      `--tls-private-key-file=${f('apiserver.key', c.servingKey)}`,
      `--client-ca-file=${f('client-ca.crt', c.clientCa)}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${f('sa.pub', c.serviceAccountPublicKey)}`,
      `--service-account-signing-key-file=${f('sa.key', c.serviceAccountPrivateKey)}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--authorization-mode=RBAC',
      '--allow-privileged=true',
      '--profiling=false',
      `--cert-dir=${c.workDir}`,
      `--requestheader-client-ca-file=${f('front-proxy-ca.crt', c.frontProxy.ca)}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${f('front-proxy-client.crt', c.frontProxy.cert)}`,
      `--proxy-client-key-file=${f('front-proxy-client.key', c.frontProxy.key)}`,
    ];
    if (!c.serviceAccountAdmission) args.push('--disable-admission-plugins=ServiceAccount');
    if (!hasDefaultRoute()) args.push('--advertise-address=127.0.0.1', '--endpoint-reconciler-type=none');
    if (c.auditLogPath) {
      // Blocking mode writes each event before the response, so a test can count requests
      // exactly the moment its own request returns.
      args.push(
        `--audit-policy-file=${f('audit-policy.yaml', AUDIT_POLICY)}`,
        `--audit-log-path=${c.auditLogPath}`,
        '--audit-log-format=json',
        '--audit-log-mode=blocking',
        '--audit-log-maxsize=0',
      );
    }
    return [...args, ...(c.extraArgs ?? [])];
  }

  async start(timeoutMs: number): Promise<void> {
    this.proc = new ManagedProcess({
      name: 'kube-apiserver',
      command: findBinary('kube-apiserver'),
      args: this.args(),
      logFile: join(this.cfg.workDir, 'kube-apiserver.log'),
    });
    this.proc.start();
    await waitFor(
      'kube-apiserver to become ready',
      async () => {
        if (!this.proc?.running) throw new StopWaiting(`kube-apiserver exited (${this.proc?.exitCode}):\n${this.proc?.recentOutput()}`);
        const r = await httpGet(`${this.url}/readyz`, { ca: this.cfg.servingCa, ...this.cfg.probeClient });
        return r.status === 200;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  get process(): ManagedProcess | undefined {
    return this.proc;
  }

  get running(): boolean {
    return !!this.proc?.running;
  }

  /**
   * Hangs the API server as a wedged host would: SIGSTOP keeps every connection open and every
   * port accepting (the kernel completes handshakes into the backlog) while nothing answers.
   */
  freeze(): void {
    const pid = this.proc?.pid;
    if (!pid || !this.running) throw new Error('kube-apiserver is not running: nothing to freeze');
    process.kill(pid, 'SIGSTOP');
    this.frozen = true;
  }

  /** Lets a frozen API server run again; the connections it held carry on where they stopped. */
  thaw(): void {
    const pid = this.proc?.pid;
    if (pid && this.frozen) process.kill(pid, 'SIGCONT');
    this.frozen = false;
  }

  private frozen = false;

  async stop(): Promise<void> {
    // A stopped process cannot handle SIGTERM: wake it first so it shuts down cleanly.
    this.thaw();
    await this.proc?.stop(10_000);
  }
}
