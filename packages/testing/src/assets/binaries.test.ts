import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BinaryNotFoundError, findBinary, versions } from './binaries.js';

const repo = join(import.meta.dirname, '../../../..');
const script = join(repo, 'tools/control-plane/ensure-binaries.mjs');

describe('findBinary', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('explains how to get a missing binary', () => {
    const empty = mkdtempSync(join(tmpdir(), 'opkit-empty-'));
    process.env.OPKIT_CACHE_DIR = empty;
    process.env.KUBEBUILDER_ASSETS = empty;
    delete process.env.TEST_ASSET_KUBE_APISERVER;
    try {
      expect(() => findBinary('kube-apiserver')).toThrow(BinaryNotFoundError);
      expect(() => findBinary('kube-apiserver')).toThrow(/npm run setup:binaries.*KUBEBUILDER_ASSETS/s);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('prefers TEST_ASSET_<NAME>, then KUBEBUILDER_ASSETS, as envtest does', () => {
    process.env.TEST_ASSET_KUBECTL = process.execPath;
    expect(findBinary('kubectl')).toBe(process.execPath);
  });
});

describe('the built toolset', () => {
  // The ldflags stamps are what make helm, kwok and clients see the real version instead of v0.0.0.
  it.each([
    ['kube-apiserver', ['--version'], `Kubernetes ${versions.kubernetes}`],
    ['kube-controller-manager', ['--version'], `Kubernetes ${versions.kubernetes}`],
    ['kube-scheduler', ['--version'], `Kubernetes ${versions.kubernetes}`],
    ['kubectl', ['version', '--client'], `Client Version: ${versions.kubernetes}`],
    ['etcd', ['--version'], `etcd Version: ${versions.etcd.slice(1)}`],
    ['kwok', ['--version'], versions.kwok],
    ['helm', ['version', '--short'], versions.helm],
    ['helm-docs', ['--version'], versions.helmDocs.slice(1)],
    ['pebble', ['-version'], versions.pebble],
  ] as const)('%s reports its pinned version', (bin, args, expected) => {
    const r = spawnSync(findBinary(bin), [...args], { encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).toContain(expected);
  });

  it('is pinned in the Go wrapper modules exactly as versions.json says', () => {
    const gomod = (tool: string) => readFileSync(join(repo, 'tools/control-plane/go', tool, 'go.mod'), 'utf8');
    expect(gomod('kubernetes')).toContain(`k8s.io/kubernetes ${versions.kubernetes}`);
    expect(gomod('kubernetes')).toContain(`k8s.io/api => k8s.io/api v0.${versions.kubernetes.slice(3)}`);
    expect(gomod('etcd')).toContain(`go.etcd.io/etcd/server/v3 ${versions.etcd}`);
    expect(gomod('kwok')).toContain(`sigs.k8s.io/kwok ${versions.kwok}`);
    expect(gomod('helm')).toContain(`helm.sh/helm/v3 ${versions.helm}`);
    expect(gomod('helm-docs')).toContain(`github.com/norwoodj/helm-docs ${versions.helmDocs}`);
    expect(gomod('pebble')).toContain(`github.com/letsencrypt/pebble/v2 ${versions.pebble}`);
    expect(gomod('registry')).toContain(`github.com/distribution/distribution/v3 ${versions.distribution}`);
    expect(gomod('cosign')).toContain(`github.com/sigstore/cosign/v2 ${versions.cosign}`);
    expect(gomod('syft')).toContain(`github.com/anchore/syft ${versions.syft}`);
    expect(gomod('cert-manager')).toContain(`github.com/cert-manager/cert-manager ${versions.certManager}`);
    expect(gomod('cmctl')).toContain(`github.com/cert-manager/cmctl/v2 ${versions.cmctl}`);
    expect(gomod('aws-privateca-issuer')).toContain(`github.com/cert-manager/aws-privateca-issuer ${versions.awsPrivateCaIssuer}`);
  });
});

describe('tools/control-plane/ensure-binaries.mjs', () => {
  it('is idempotent: a second run only checks its stamps', () => {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/kubernetes v[\d.]+ \(cached\)/);
    expect(Date.now() - t0).toBeLessThan(15_000);
  });

  it('says what to install when Go is missing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'opkit-nogo-'));
    try {
      const r = spawnSync(process.execPath, [script, '--only', 'kwok'], {
        encoding: 'utf8',
        env: { ...process.env, PATH: '/nonexistent', OPKIT_CACHE_DIR: empty, KUBEBUILDER_ASSETS: '' },
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/Go is not installed\. Install Go >= [\d.]+.*KUBEBUILDER_ASSETS/s);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('says the module proxy is unreachable when it is', () => {
    const empty = mkdtempSync(join(tmpdir(), 'opkit-noproxy-'));
    try {
      const r = spawnSync(process.execPath, [script, '--only', 'pebble'], {
        encoding: 'utf8',
        env: { ...process.env, OPKIT_CACHE_DIR: empty, KUBEBUILDER_ASSETS: '', GOMODCACHE: join(empty, 'mod'), GOPROXY: 'http://127.0.0.1:9', GOFLAGS: '' },
        timeout: 120_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/module proxy .* looks unreachable/);
    } finally {
      spawnSync('chmod', ['-R', 'u+w', empty]);
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
