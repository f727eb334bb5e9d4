import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { containerdHostsToml, localRegistryHostingConfigMap, registryAction, registryPort, type RegistryContainerState } from './registry.js';

describe('registryAction: what to do with the registry container, from what is there', () => {
  const want = { image: 'opkit.local/registry:v3.1.2-abc', hostPort: 5001 };
  const there = (s: Partial<RegistryContainerState>): RegistryContainerState => ({ image: want.image, running: true, hostPort: 5001, ...s });
  it.each([
    ['none: create it', undefined, 'create'],
    ['running, this image, this port: use it', there({}), 'use'],
    ['stopped (dockerd restarted): start it', there({ running: false }), 'start'],
    ['another image (a new distribution version, a rebuilt base): replace it', there({ image: 'opkit.local/registry:v3.0.0-def' }), 'replace'],
    ['published on another port (OPKIT_REGISTRY_PORT changed): replace it', there({ hostPort: 5002 }), 'replace'],
    ['not published at all (made by hand): replace it', there({ hostPort: undefined }), 'replace'],
    ['stopped and of another image: replace, not start', there({ running: false, image: 'registry:3' }), 'replace'],
  ] as const)('%s', (_name, state, action) => {
    expect(registryAction(state, want)).toBe(action);
  });
});

describe('registryPort', () => {
  it('is 5001, as in kind’s guide, unless OPKIT_REGISTRY_PORT says otherwise', () => {
    expect(registryPort({})).toBe(5001);
    expect(registryPort({ OPKIT_REGISTRY_PORT: '' })).toBe(5001);
    expect(registryPort({ OPKIT_REGISTRY_PORT: '15000' })).toBe(15000);
  });
  it.each(['0', '65536', 'five', '50.1', '-1'])('refuses OPKIT_REGISTRY_PORT=%s, naming it', (raw) => {
    expect(() => registryPort({ OPKIT_REGISTRY_PORT: raw })).toThrow(`OPKIT_REGISTRY_PORT=${raw} is not a TCP port`);
  });
});

describe("the nodes' view of the registry", () => {
  const registry = { host: 'localhost:5001', inNetwork: 'opkit-registry:5000' };
  it('containerd sends pulls of localhost:5001/… to the container, over plain HTTP, for pulling only', () => {
    expect(containerdHostsToml(registry)).toBe('[host."http://opkit-registry:5000"]\n  capabilities = ["pull", "resolve"]\n');
  });
  it("KEP-1755's ConfigMap names the host tools push to", () => {
    const cm = localRegistryHostingConfigMap(registry) as { metadata: { name: string; namespace: string }; data: Record<string, string> };
    expect(cm.metadata).toEqual({ name: 'local-registry-hosting', namespace: 'kube-public' });
    expect(parse(cm.data['localRegistryHosting.v1']!)).toEqual({ host: 'localhost:5001', help: 'https://kind.sigs.k8s.io/docs/user/local-registry/' });
  });
});
