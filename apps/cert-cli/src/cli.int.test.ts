import { Client, Transport } from '@opkit/runtime';
import {
  freePort,
  helmTemplate,
  kubectlApply,
  requireBuilt,
  startControlPlane,
  startPebble,
  waitFor,
  workspaceApp,
  type ControlPlane,
  type Pebble,
} from '@opkit/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Certificate, CertificateRequest, Challenge } from './api.js';
import { runCli } from './cli.js';

const SYSTEM = 'opkit-system';
/** A namespace the operator does not watch: requests there wait for opkit-cert's decision. */
const UNDECIDED = 'undecided';

describe('opkit-cert against a running cert operator (its bundle, as a process)', () => {
  let plane: ControlPlane;
  let admin: Client;
  let operator: ChildProcess;
  let pebble: Pebble;
  /** Runs the CLI as a user would (kubeconfig, namespace flags); its output lines and exit code. */
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['--kubeconfig', plane.kubeconfigPath, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l), now: Date.now, width: 120 });
    return { code, out, err, text: out.join('\n') };
  };
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const ready = (namespace: string, name: string, revision = 1) =>
    waitFor(
      `${name} Ready at revision ${revision}`,
      async () => {
        const c = await admin.get(Certificate, { namespace, name });
        return c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') && (c.status.revision ?? 0) >= revision && c;
      },
      { timeoutMs: 30_000 },
    );

  beforeAll(async () => {
    plane = await startControlPlane();
    pebble = await startPebble();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    // The CRDs as the chart installs them, and the operator as it ships: its bundle, as a process.
    const app = workspaceApp('cert-operator');
    requireBuilt([app]);
    const rendered = parseAllDocuments(await helmTemplate(app.chart!, {}))
      .map((d) => d.toJSON() as { kind?: string })
      .filter((o) => o?.kind === 'CustomResourceDefinition');
    await kubectlApply(plane.kubeconfigPath, rendered.map((o) => JSON.stringify(o)).join('\n---\n'));
    await waitFor('CRDs served', () => admin.list(Certificate).then(() => true));
    for (const ns of [SYSTEM, 'shop', 'manual', UNDECIDED]) await plane.kubectl(['create', 'namespace', ns]);
    const probes = await freePort();
    operator = spawn(
      process.execPath,
      [
        app.bundle,
        `--kubeconfig=${plane.kubeconfigPath}`,
        '--metrics-bind-address=127.0.0.1:0',
        `--health-probe-bind-address=127.0.0.1:${probes}`,
        `--cluster-resource-namespace=${SYSTEM}`,
      ],
      // Every namespace but UNDECIDED: a request there waits for a decision, as with auto-approval off.
      { stdio: 'ignore', env: { ...process.env, WATCH_NAMESPACE: [SYSTEM, 'shop', 'manual'].join(',') } },
    );
    await waitFor(
      'the operator ready',
      () =>
        fetch(`http://127.0.0.1:${probes}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: 'shop' }, spec: { selfSigned: {} } });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'root', namespace: 'shop' },
      spec: { secretName: 'root', isCA: true, commonName: 'cli root', issuerRef: { name: 'selfsigned' }, privateKey: { algorithm: 'ECDSA' } },
    });
    await ready('shop', 'root');
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'shop' }, spec: { ca: { secretName: 'root' } } });
    for (const name of ['web', 'api']) {
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Certificate',
        metadata: { name, namespace: 'shop', labels: { team: 'shop' } },
        spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.com`], issuerRef: { name: 'ca' } },
      });
    }
    await ready('shop', 'web');
    await ready('shop', 'api');
  });
  afterAll(async () => {
    operator?.kill('SIGTERM');
    await pebble?.stop();
    await plane?.stop();
  });

  it('status: a Ready certificate, in a few lines', async () => {
    const r = await cli('status', 'certificate', 'web', '-n', 'shop');
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe('Certificate shop/web  issuer Issuer/ca  for web.example.com');
    expect(r.text).toMatch(/Ready=True \(Ready\): Certificate is up to date and has not expired/);
    expect(r.text).toMatch(/Secret web-tls: DNS:web.example.com, valid until /);
    expect(r.out.at(-1)).toBe('Why: The certificate is up to date and has not expired.');
    expect(r.out.every((l) => l.length <= 120)).toBe(true);
  });

  it('status explains a stuck ACME challenge in one screen', async () => {
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'le', namespace: 'shop' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: 'le-account' },
          solvers: [{ http01: { ingress: { ingressClassName: 'nowhere' } } }],
        },
      },
    });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'stuck', namespace: 'shop' },
      spec: { secretName: 'stuck-tls', dnsNames: ['stuck.example.test'], issuerRef: { name: 'le' } },
    });
    // No ingress controller serves the solver: the self-check cannot pass.
    const r = await waitFor(
      'a stuck challenge explained',
      async () => {
        const x = await cli('status', 'certificate', 'stuck', '-n', 'shop');
        const why = x.out
          .slice(x.out.findIndex((l) => l.startsWith('Why: ')))
          .join(' ')
          .replace(/\s+/g, ' ');
        return (
          why.startsWith(
            'Why: The HTTP-01 challenge for stuck.example.test is pending: Waiting for HTTP-01 challenge propagation: GET http://stuck.example.test',
          ) && x
        );
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    console.log(r.text);
    expect(r.out.length).toBeLessThanOrEqual(24);
    // The explanation is whole: wrapped, not cut.
    const why = r.out.slice(r.out.findIndex((l) => l.startsWith('Why: '))).join(' ');
    expect(why).not.toContain('…');
    expect(why.replace(/\s+/g, ' ')).toContain((await admin.list(Challenge, { namespace: 'shop' })).items[0]!.status!.reason!.replace(/\s+/g, ' '));
    expect(r.text).toMatch(/^CertificateRequest stuck-1 {2}Approved=True/m);
    expect(r.text).toMatch(/^Order stuck-1-\d+ {2}state pending/m);
    expect(r.text).toMatch(/^ {2}Challenge stuck-1-\d+-\d+ {2}HTTP-01 stuck.example.test {2}pending, presented /m);
    expect(r.text).toMatch(/Secret stuck-tls: does not exist yet/);
  });

  it('renew: by name, and by selector', async () => {
    expect((await cli('renew', 'web', '-n', 'shop')).out).toEqual(['Manually triggered issuance of Certificate shop/web']);
    await ready('shop', 'web', 2);
    const bySelector = await cli('renew', '-l', 'team=shop', '-n', 'shop');
    expect(bySelector.out.sort()).toEqual(['Manually triggered issuance of Certificate shop/api', 'Manually triggered issuance of Certificate shop/web']);
    await ready('shop', 'api', 2);
    await ready('shop', 'web', 3);
    expect((await cli('renew', '-n', 'shop')).code).toBe(2);
  });

  it('renew --all: every Certificate in the namespace; with -A, in the cluster', async () => {
    const revision = async (namespace: string, name: string) => (await admin.get(Certificate, { namespace, name })).status?.revision ?? 0;
    const before = { root: await revision('shop', 'root'), web: await revision('shop', 'web'), api: await revision('shop', 'api') };
    const shop = (await admin.list(Certificate, { namespace: 'shop' })).items.map((c) => c.metadata.name).sort();
    expect(shop).toEqual(expect.arrayContaining(['api', 'root', 'web']));
    const inShop = await cli('renew', '--all', '-n', 'shop');
    expect(inShop.out.sort()).toEqual(shop.map((n) => `Manually triggered issuance of Certificate shop/${n}`));
    for (const [name, rev] of Object.entries(before)) await ready('shop', name, rev + 1);
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: 'manual' }, spec: { selfSigned: {} } });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'other', namespace: 'manual' },
      spec: { secretName: 'other-tls', dnsNames: ['other.example.com'], issuerRef: { name: 'selfsigned' } },
    });
    await ready('manual', 'other');
    const everywhere = await cli('renew', '--all', '-A');
    expect(everywhere.out.sort()).toEqual(['manual/other', ...shop.map((n) => `shop/${n}`)].map((n) => `Manually triggered issuance of Certificate ${n}`));
    await ready('manual', 'other', 2);
  });

  it('--context picks the kubeconfig context, as kubectl', async () => {
    // A kubeconfig whose current context points nowhere; the named one is the cluster's.
    const { readFileSync, writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { parse, stringify } = await import('yaml');
    const kc = parse(readFileSync(plane.kubeconfigPath, 'utf8')) as {
      clusters: { name: string; cluster: { server: string } }[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
      'current-context': string;
    };
    const good = kc.contexts.find((c) => c.name === kc['current-context'])!;
    kc.clusters.push({ name: 'nowhere', cluster: { server: `https://127.0.0.1:${await freePort()}` } });
    kc.contexts.push({ name: 'nowhere', context: { cluster: 'nowhere', user: good.context.user } });
    kc['current-context'] = 'nowhere';
    const path = join(mkdtempSync(join(tmpdir(), 'opkit-cli-')), 'kubeconfig');
    writeFileSync(path, stringify(kc));
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(['--kubeconfig', path, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l), now: Date.now, width: 120 });
      return { code, out, err };
    };
    expect((await run('check', 'api')).code).toBe(1);
    expect(await run('check', 'api', '--context', good.name)).toMatchObject({ code: 0, out: ['The cert operator API is ready'] });
  });

  it('inspect secret: the chain decoded, the key checked, the chain verified against ca.crt', async () => {
    const r = await cli('inspect', 'secret', 'api-tls', '-n', 'shop');
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.text).toMatch(/Written for Certificate api/);
    expect(r.text).toMatch(/SANs: +DNS:api.example.com/);
    expect(r.text).toMatch(/Issuer: +CN=cli root/);
    expect(r.text).toMatch(/Private key: matches the certificate/);
    expect(r.text).toMatch(/The chain verifies against ca.crt/);
  });

  it('approve and deny: a request waits for a decision when auto-approval is off', async () => {
    // With auto-approval on, the operator approves every request it sees (an external issuer's too,
    // as cert-manager's approver does): these are made where it does not watch, so they stay undecided.
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'CertificateRequest',
      metadata: { name: 'external', namespace: UNDECIDED },
      spec: { request: 'LS0tLQ==', issuerRef: { name: 'x', kind: 'VaultIssuer', group: 'example.com' } },
    });
    expect((await cli('approve', 'external', '-n', UNDECIDED)).out).toEqual(['Approved CertificateRequest undecided/external']);
    const cr = await admin.get(CertificateRequest, { namespace: UNDECIDED, name: 'external' });
    expect(cr.status?.conditions?.find((c) => c.type === 'Approved')).toMatchObject({
      status: 'True',
      reason: 'OpkitCert',
      message: 'manually approved by opkit-cert',
    });
    const again = await cli('deny', 'external', '-n', UNDECIDED);
    expect(again).toMatchObject({ code: 1, err: ['opkit-cert: CertificateRequest undecided/external is already approved'] });
    // Denied, with the reason given: the request is final, and says why.
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'CertificateRequest',
      metadata: { name: 'unwanted', namespace: UNDECIDED },
      spec: { request: 'LS0tLQ==', issuerRef: { name: 'x', kind: 'VaultIssuer', group: 'example.com' } },
    });
    expect((await cli('deny', 'unwanted', '-n', UNDECIDED, '--reason', 'NotOurs', '--message', 'this team does not issue for example.com')).out).toEqual([
      'Denied CertificateRequest undecided/unwanted',
    ]);
    const denied = await admin.get(CertificateRequest, { namespace: UNDECIDED, name: 'unwanted' });
    expect(denied.status?.conditions?.find((c) => c.type === 'Denied')).toMatchObject({
      status: 'True',
      reason: 'NotOurs',
      message: 'this team does not issue for example.com',
    });
    expect((await cli('approve', 'unwanted', '-n', UNDECIDED)).code).toBe(1);
  });

  it('check api: ready here, and says what is missing on a cluster without the CRDs', async () => {
    expect(await cli('check', 'api', '-n', 'shop')).toMatchObject({ code: 0, out: ['The cert operator API is ready'] });
    const bare = await startControlPlane();
    try {
      const out: string[] = [];
      const code = await runCli(['check', 'api', '--kubeconfig', bare.kubeconfigPath], {
        out: () => undefined,
        err: (l) => out.push(l),
        now: Date.now,
        width: 120,
      });
      expect(code).toBe(1);
      expect(out).toEqual([
        'opkit-cert: the cert operator API is not ready: the CRD certificates.cert.opkit.dev is not installed (helm install the cert-operator chart)',
      ]);
    } finally {
      await bare.stop();
    }
  });

  it('says how to use it when the command line is wrong', async () => {
    const r = await cli('status', 'certificate');
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/^opkit-cert: status certificate: name the Certificate/);
    expect((await cli('frobnicate')).err[0]).toBe('opkit-cert: unknown command "frobnicate"');
  });
});
