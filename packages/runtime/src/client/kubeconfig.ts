import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

/**
 * What the Transport needs of a kubeconfig: the server of the current context, and the TLS and
 * credentials of its user applied to a request. Our {@link KubeConfig} has it, and so has
 * @kubernetes/client-node's, so tests and users may pass either.
 */
export interface ClusterAccess {
  /** `proxyUrl`: the cluster's `proxy-url`, the HTTP proxy to reach it through (client/proxy.ts). */
  getCurrentCluster(): { server: string; proxyUrl?: string } | null;
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
  getCurrentContext(): string;
  getContextObject(name: string): { namespace?: string } | null;
  /** Drops cached credentials (an exec plugin's token) after the API server refused them. */
  refreshCredentials?(): void;
}

interface NamedCluster {
  server: string;
  certificateAuthority?: string;
  certificateAuthorityData?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}
interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion?: string;
  installHint?: string;
  provideClusterInfo?: boolean;
}
interface NamedUser {
  token?: string;
  tokenFile?: string;
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  authProvider?: unknown;
}
interface Context {
  cluster: string;
  user: string;
  namespace?: string;
}
interface Credential {
  token?: string;
  cert?: string;
  key?: string;
  expires?: number;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A kubeconfig that cannot be read: not YAML, or something in it of the wrong shape (and where). */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

/**
 * A kubeconfig, read as kubectl reads it: several files merged (the first to name a cluster,
 * user or context wins, and the first current-context), relative paths against the file that
 * holds them, tokens from files re-read (bound ServiceAccount tokens rotate), client certificates
 * and keys from files or data, exec credential plugins (client.authentication.k8s.io, as EKS, GKE
 * and AKS use) cached until they expire, and the oidc auth-provider's id-token. Our own rather than
 * @kubernetes/client-node's: loading that library costs an operator ~60 MiB of memory.
 */
export class KubeConfig implements ClusterAccess {
  private readonly clusters = new Map<string, NamedCluster>();
  private readonly users = new Map<string, NamedUser>();
  private readonly contexts = new Map<string, Context>();
  private current = '';
  private exec?: { user: string; credential: Promise<Credential> };
  private readonly sources: string[] = [];

  /** kubectl's merge of a KUBECONFIG list (or one file). */
  static fromFiles(paths: string[]): KubeConfig {
    const kc = new KubeConfig();
    for (const p of paths) kc.mergeText(readFileSync(p, 'utf8'), dirname(p), p);
    return kc;
  }

  /** One kubeconfig's text (relative paths against `base`). KubeconfigError when it is not one. */
  static fromText(text: string, base = process.cwd(), source = 'kubeconfig'): KubeConfig {
    const kc = new KubeConfig();
    kc.mergeText(text, base, source);
    return kc;
  }

  private mergeText(text: string, base: string, source: string): void {
    let doc: unknown;
    try {
      doc = parse(text, { maxAliasCount: 100 });
    } catch (err) {
      throw new KubeconfigError(`${source} is not YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    if (doc === null || doc === undefined) doc = {};
    if (typeof doc !== 'object' || Array.isArray(doc))
      throw new KubeconfigError(`${source} is not a kubeconfig: it holds a ${Array.isArray(doc) ? 'list' : typeof doc}, not a map`);
    this.merge(doc as Record<string, unknown>, base, source);
  }

  /** The pod's ServiceAccount, as in-cluster clients read it. */
  static inCluster(env: NodeJS.ProcessEnv = process.env, dir = SA_DIR): KubeConfig {
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT ?? '443';
    if (!host) throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST is not set');
    const kc = new KubeConfig();
    const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
    kc.clusters.set('in-cluster', { server, certificateAuthority: join(dir, 'ca.crt') });
    kc.users.set('in-cluster', { tokenFile: join(dir, 'token') });
    const nsFile = join(dir, 'namespace');
    kc.contexts.set('in-cluster', {
      cluster: 'in-cluster',
      user: 'in-cluster',
      namespace: existsSync(nsFile) ? readFileSync(nsFile, 'utf8').trim() : undefined,
    });
    kc.current = 'in-cluster';
    kc.sources.push('in-cluster');
    return kc;
  }

  /** Merges one document; entries of the wrong shape are refused with where they are, not half-read. */
  private merge(doc: Record<string, unknown>, base: string, source: string): void {
    this.sources.push(source);
    const abs = (p: string | undefined) => (p && !isAbsolute(p) ? join(base, p) : p);
    const fail = (where: string, what: string) => {
      throw new KubeconfigError(`${source}: ${where} ${what}`);
    };
    const str = (v: unknown, where: string): string | undefined =>
      v === undefined || v === null ? undefined : typeof v === 'string' ? v : fail(where, 'must be a string');
    const map = (v: unknown, where: string): Record<string, unknown> | undefined =>
      v === undefined || v === null ? undefined : typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(where, 'must be a map');
    const list = (key: string): { name: string; entry: Record<string, unknown> }[] => {
      const v = doc[key];
      if (v === undefined || v === null) return [];
      if (!Array.isArray(v)) return fail(key, 'must be a list');
      return v.map((item: unknown, i) => {
        const e = map(item, `${key}[${i}]`) ?? {};
        return { name: str(e.name, `${key}[${i}].name`) ?? '', entry: e };
      });
    };
    for (const [i, { name, entry }] of list('clusters').entries()) {
      const cluster = map(entry.cluster, `clusters[${i}].cluster`);
      if (!name || !cluster || this.clusters.has(name)) continue;
      const at = `clusters[${i}].cluster`;
      this.clusters.set(name, {
        server: str(cluster.server, `${at}.server`) ?? '',
        certificateAuthority: abs(str(cluster['certificate-authority'], `${at}.certificate-authority`)),
        certificateAuthorityData: str(cluster['certificate-authority-data'], `${at}.certificate-authority-data`),
        insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
        tlsServerName: str(cluster['tls-server-name'], `${at}.tls-server-name`),
        proxyUrl: str(cluster['proxy-url'], `${at}.proxy-url`),
      });
    }
    for (const [i, { name, entry }] of list('users').entries()) {
      if (!name || this.users.has(name)) continue;
      const at = `users[${i}].user`;
      const u = map(entry.user, at) ?? {};
      const exec = map(u.exec, `${at}.exec`);
      const command = exec ? str(exec.command, `${at}.exec.command`) : undefined;
      if (exec && !command) fail(`${at}.exec.command`, 'is required');
      if (exec?.args !== undefined && !(Array.isArray(exec.args) && exec.args.every((a) => typeof a === 'string')))
        fail(`${at}.exec.args`, 'must be a list of strings');
      if (
        exec?.env !== undefined &&
        !(
          Array.isArray(exec.env) &&
          exec.env.every(
            (e) => e && typeof e === 'object' && typeof (e as { name?: unknown }).name === 'string' && typeof (e as { value?: unknown }).value === 'string',
          )
        )
      )
        fail(`${at}.exec.env`, 'must be a list of {name, value} strings');
      this.users.set(name, {
        token: str(u.token, `${at}.token`),
        tokenFile: abs(str(u.tokenFile, `${at}.tokenFile`)),
        clientCertificate: abs(str(u['client-certificate'], `${at}.client-certificate`)),
        clientCertificateData: str(u['client-certificate-data'], `${at}.client-certificate-data`),
        clientKey: abs(str(u['client-key'], `${at}.client-key`)),
        clientKeyData: str(u['client-key-data'], `${at}.client-key-data`),
        username: str(u.username, `${at}.username`),
        password: str(u.password, `${at}.password`),
        // A relative command with a slash is relative to the kubeconfig; a bare name is looked up on PATH.
        exec: exec && command ? ({ ...exec, command: command.includes('/') ? abs(command)! : command } as ExecConfig) : undefined,
        authProvider: map(u['auth-provider'], `${at}.auth-provider`),
      });
    }
    for (const [i, { name, entry }] of list('contexts').entries()) {
      const context = map(entry.context, `contexts[${i}].context`);
      if (!name || !context || this.contexts.has(name)) continue;
      const at = `contexts[${i}].context`;
      this.contexts.set(name, {
        cluster: str(context.cluster, `${at}.cluster`) ?? '',
        user: str(context.user, `${at}.user`) ?? '',
        namespace: str(context.namespace, `${at}.namespace`),
      });
    }
    const current = str(doc['current-context'], 'current-context');
    if (!this.current && current) this.current = current;
  }

  getCurrentContext(): string {
    return this.current;
  }

  setCurrentContext(name: string): void {
    if (!this.contexts.has(name)) throw new Error(`context "${name}" is not in the kubeconfig (${[...this.contexts.keys()].join(', ') || 'it has none'})`);
    this.current = name;
    this.exec = undefined;
  }

  getContextObject(name: string): Context | null {
    return this.contexts.get(name) ?? null;
  }

  getCurrentCluster(): NamedCluster | null {
    const ctx = this.contexts.get(this.current);
    return (ctx && this.clusters.get(ctx.cluster)) ?? null;
  }

  private currentUser(): { name: string; user: NamedUser } | undefined {
    const ctx = this.contexts.get(this.current);
    const user = ctx && this.users.get(ctx.user);
    return ctx && user ? { name: ctx.user, user } : undefined;
  }

  refreshCredentials(): void {
    this.exec = undefined;
  }

  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig (${this.sources.join(', ')}): the current context "${this.current}" names no cluster`);
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string> | undefined) };
    if (cluster.certificateAuthorityData) opts.ca = Buffer.from(cluster.certificateAuthorityData, 'base64');
    else if (cluster.certificateAuthority) opts.ca = readFileSync(cluster.certificateAuthority);
    if (cluster.insecureSkipTlsVerify) opts.rejectUnauthorized = false;
    if (cluster.tlsServerName) opts.servername = cluster.tlsServerName;
    const found = this.currentUser();
    const u = found?.user ?? {};
    if (u.clientCertificateData) opts.cert = Buffer.from(u.clientCertificateData, 'base64');
    else if (u.clientCertificate) opts.cert = readFileSync(u.clientCertificate);
    if (u.clientKeyData) opts.key = Buffer.from(u.clientKeyData, 'base64');
    else if (u.clientKey) opts.key = readFileSync(u.clientKey);
    let token = u.token ?? (u.authProvider ? authProviderToken(u.authProvider as { name?: string; config?: Record<string, string> }) : undefined);
    if (!token && u.tokenFile) token = readFileSync(u.tokenFile, 'utf8').trim();
    if (u.exec) {
      const cred = await this.execCredential(found!.name, u.exec, cluster);
      token = cred.token ?? token;
      if (cred.cert) opts.cert = cred.cert;
      if (cred.key) opts.key = cred.key;
    }
    if (token) headers.Authorization = `Bearer ${token}`;
    else if (u.username !== undefined) opts.auth = `${u.username}:${u.password ?? ''}`;
    opts.headers = headers;
  }

  /** The plugin's credential, run again once it expires (or after refreshCredentials). */
  private execCredential(user: string, exec: ExecConfig, cluster: NamedCluster): Promise<Credential> {
    const cached = this.exec?.user === user ? this.exec.credential : undefined;
    if (cached) {
      return cached.then((c) =>
        c.expires !== undefined && c.expires - Date.now() < 10_000 ? ((this.exec = undefined), this.execCredential(user, exec, cluster)) : c,
      );
    }
    const credential = runExecPlugin(exec, cluster);
    this.exec = { user, credential };
    credential.catch(() => (this.exec = undefined));
    return credential;
  }
}

/** Runs an exec credential plugin (client.authentication.k8s.io v1 or v1beta1), non-interactively. */
function runExecPlugin(exec: ExecConfig, cluster: NamedCluster): Promise<Credential> {
  const apiVersion = exec.apiVersion ?? 'client.authentication.k8s.io/v1';
  const info = {
    apiVersion,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      ...(exec.provideClusterInfo
        ? {
            cluster: {
              server: cluster.server,
              'tls-server-name': cluster.tlsServerName,
              'insecure-skip-tls-verify': cluster.insecureSkipTlsVerify,
              'certificate-authority-data': cluster.certificateAuthorityData,
            },
          }
        : {}),
    },
  };
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  return new Promise((resolve, reject) => {
    execFile(exec.command, exec.args ?? [], { env, timeout: 60_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) {
        const hint = (err as NodeJS.ErrnoException).code === 'ENOENT' && exec.installHint ? `: ${exec.installHint}` : '';
        return reject(new Error(`exec credential plugin ${exec.command} failed: ${stderr.trim() || err.message}${hint}`));
      }
      try {
        const out = JSON.parse(stdout) as { status?: { token?: string; clientCertificateData?: string; clientKeyData?: string; expirationTimestamp?: string } };
        const s = out.status ?? {};
        if (!s.token && !(s.clientCertificateData && s.clientKeyData))
          throw new Error('its ExecCredential has neither a token nor a client certificate and key');
        resolve({
          token: s.token,
          cert: s.clientCertificateData,
          key: s.clientKeyData,
          expires: s.expirationTimestamp ? Date.parse(s.expirationTimestamp) : undefined,
        });
      } catch (e) {
        reject(new Error(`exec credential plugin ${exec.command}: ${(e as Error).message}`));
      }
    });
  });
}

/**
 * A legacy auth-provider user. kubectl 1.26 removed the gcp and azure providers in favour of exec
 * plugins; oidc remains, and its current id-token is used as the bearer token (refreshing it is
 * the job of an exec plugin such as kubelogin).
 */
function authProviderToken(provider: { name?: string; config?: Record<string, string> }): string {
  if (provider.name === 'oidc' && provider.config?.['id-token']) return provider.config['id-token'];
  if (provider.name === 'oidc') throw new Error('the oidc auth-provider has no id-token: log in again, or use an exec plugin (kubelogin)');
  throw new Error(
    `the ${provider.name ?? 'unnamed'} auth-provider is not supported (kubectl removed it in 1.26): use its exec credential plugin (gke-gcloud-auth-plugin, kubelogin)`,
  );
}
