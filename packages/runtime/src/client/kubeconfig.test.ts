import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { KubeConfig } from './kubeconfig.js';

const dir = () => mkdtempSync(join(tmpdir(), 'opkit-kubeconfig-'));
const write = (d: string, name: string, doc: object) => {
  const p = join(d, name);
  writeFileSync(p, stringify(doc));
  return p;
};
const config = (over: { clusters?: object[]; users?: object[]; contexts?: object[]; current?: string }) => ({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: over.clusters ?? [],
  users: over.users ?? [],
  contexts: over.contexts ?? [],
  ...(over.current ? { 'current-context': over.current } : {}),
});
const applied = async (kc: KubeConfig) => {
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return opts;
};

describe('KubeConfig: read as kubectl reads it', () => {
  it('merges a KUBECONFIG list: the first file to name an entry, and the first current-context, win', () => {
    const d = dir();
    const a = write(
      d,
      'a',
      config({
        clusters: [{ name: 'c', cluster: { server: 'https://a:6443' } }],
        users: [{ name: 'u', user: { token: 'from-a' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'team' } }],
        current: 'x',
      }),
    );
    const b = write(
      d,
      'b',
      config({
        clusters: [
          { name: 'c', cluster: { server: 'https://b:6443' } },
          { name: 'other', cluster: { server: 'https://o:6443' } },
        ],
        contexts: [{ name: 'y', context: { cluster: 'other', user: 'u' } }],
        current: 'y',
      }),
    );
    const kc = KubeConfig.fromFiles([a, b]);
    expect(kc.getCurrentContext()).toBe('x');
    expect(kc.getCurrentCluster()?.server).toBe('https://a:6443');
    expect(kc.getContextObject('x')?.namespace).toBe('team');
    kc.setCurrentContext('y');
    expect(kc.getCurrentCluster()?.server).toBe('https://o:6443');
    expect(() => kc.setCurrentContext('z')).toThrow(/context "z" is not in the kubeconfig \(x, y\)/);
  });

  it('reads relative paths against the file that names them, CA and client certificate from files or data', async () => {
    const d = dir();
    mkdirSync(join(d, 'pki'));
    writeFileSync(join(d, 'pki/ca.crt'), 'CA');
    writeFileSync(join(d, 'pki/client.crt'), 'CERT');
    const p = write(
      d,
      'config',
      config({
        clusters: [{ name: 'c', cluster: { server: 'https://k:6443', 'certificate-authority': 'pki/ca.crt', 'tls-server-name': 'kubernetes' } }],
        users: [{ name: 'u', user: { 'client-certificate': 'pki/client.crt', 'client-key-data': Buffer.from('KEY').toString('base64') } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        current: 'x',
      }),
    );
    const opts = await applied(KubeConfig.fromFiles([p]));
    expect(String(opts.ca)).toBe('CA');
    expect(String(opts.cert)).toBe('CERT');
    expect(String(opts.key)).toBe('KEY');
    expect(opts.servername).toBe('kubernetes');
    expect(opts.headers).toEqual({});
  });

  it('re-reads a token file each time (bound ServiceAccount tokens rotate); basic auth without a token', async () => {
    const d = dir();
    writeFileSync(join(d, 'token'), 'one\n');
    const p = write(
      d,
      'config',
      config({
        clusters: [{ name: 'c', cluster: { server: 'https://k:6443', 'insecure-skip-tls-verify': true } }],
        users: [
          { name: 'u', user: { tokenFile: 'token' } },
          { name: 'basic', user: { username: 'ann', password: 'pw' } },
        ],
        contexts: [
          { name: 'x', context: { cluster: 'c', user: 'u' } },
          { name: 'b', context: { cluster: 'c', user: 'basic' } },
        ],
        current: 'x',
      }),
    );
    const kc = KubeConfig.fromFiles([p]);
    expect((await applied(kc)).headers).toEqual({ Authorization: 'Bearer one' });
    writeFileSync(join(d, 'token'), 'two\n');
    const opts = await applied(kc);
    expect(opts.headers).toEqual({ Authorization: 'Bearer two' });
    expect(opts.rejectUnauthorized).toBe(false);
    kc.setCurrentContext('b');
    expect((await applied(kc)).auth).toBe('ann:pw');
  });

  it('runs an exec credential plugin with its env and KUBERNETES_EXEC_INFO, caches its token until it expires, and again when told', async () => {
    const d = dir();
    const log = join(d, 'calls');
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    writeFileSync(
      join(d, 'plugin'),
      `#!/bin/sh\necho "$KUBERNETES_EXEC_INFO|$TEAM" >> ${log}\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-%s","expirationTimestamp":"${expires}"}}' "$(wc -l < ${log} | tr -d ' ')"\n`,
    );
    chmodSync(join(d, 'plugin'), 0o755);
    const p = write(
      d,
      'config',
      config({
        clusters: [{ name: 'c', cluster: { server: 'https://k:6443' } }],
        users: [
          {
            name: 'u',
            user: {
              exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugin', env: [{ name: 'TEAM', value: 'ops' }], provideClusterInfo: true },
            },
          },
        ],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        current: 'x',
      }),
    );
    const kc = KubeConfig.fromFiles([p]);
    expect((await applied(kc)).headers).toEqual({ Authorization: 'Bearer exec-1' });
    expect((await applied(kc)).headers).toEqual({ Authorization: 'Bearer exec-1' });
    const [info, team] = readFileSync(log, 'utf8').trim().split('|');
    expect(JSON.parse(info!)).toMatchObject({ kind: 'ExecCredential', spec: { interactive: false, cluster: { server: 'https://k:6443' } } });
    expect(team).toBe('ops');
    kc.refreshCredentials();
    expect((await applied(kc)).headers).toEqual({ Authorization: 'Bearer exec-2' });
  });

  it('says what is wrong with a plugin that fails or is missing', async () => {
    const d = dir();
    const p = write(
      d,
      'config',
      config({
        clusters: [{ name: 'c', cluster: { server: 'https://k:6443' } }],
        users: [{ name: 'u', user: { exec: { command: 'opkit-no-such-plugin', installHint: 'install it from example.com' } } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        current: 'x',
      }),
    );
    await expect(applied(KubeConfig.fromFiles([p]))).rejects.toThrow(/exec credential plugin opkit-no-such-plugin failed: .*install it from example.com/);
  });

  it("uses an oidc auth-provider's id-token, and names the exec plugin that replaces a removed provider", async () => {
    const d = dir();
    const p = write(
      d,
      'config',
      config({
        clusters: [{ name: 'c', cluster: { server: 'https://k:6443' } }],
        users: [
          { name: 'oidc', user: { 'auth-provider': { name: 'oidc', config: { 'id-token': 'jwt', 'idp-issuer-url': 'https://idp' } } } },
          { name: 'gcp', user: { 'auth-provider': { name: 'gcp', config: {} } } },
        ],
        contexts: [
          { name: 'o', context: { cluster: 'c', user: 'oidc' } },
          { name: 'g', context: { cluster: 'c', user: 'gcp' } },
        ],
        current: 'o',
      }),
    );
    const kc = KubeConfig.fromFiles([p]);
    expect((await applied(kc)).headers).toEqual({ Authorization: 'Bearer jwt' });
    kc.setCurrentContext('g');
    await expect(applied(kc)).rejects.toThrow(/the gcp auth-provider is not supported \(kubectl removed it in 1.26\): use its exec credential plugin/);
  });

  it('reads the pod ServiceAccount in a cluster', async () => {
    const d = dir();
    writeFileSync(join(d, 'token'), 'sa-token');
    writeFileSync(join(d, 'ca.crt'), 'CLUSTER CA');
    writeFileSync(join(d, 'namespace'), 'opkit-system\n');
    const kc = KubeConfig.inCluster({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, d);
    expect(kc.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('opkit-system');
    const opts = await applied(kc);
    expect(opts.headers).toEqual({ Authorization: 'Bearer sa-token' });
    expect(String(opts.ca)).toBe('CLUSTER CA');
  });
});
