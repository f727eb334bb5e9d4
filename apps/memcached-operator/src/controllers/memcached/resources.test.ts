import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE, type MemcachedObject } from '../../api/v1beta1/memcached.js';
import { desiredDeployment, desiredService } from './resources.js';

const mc = (spec: Partial<MemcachedObject['spec']> = {}): MemcachedObject => ({
  apiVersion: 'cache.opkit.dev/v1beta1',
  kind: 'Memcached',
  metadata: { name: 'cache', namespace: 'shop', uid: 'u-1', generation: 1 },
  spec: { replicas: 3, image: DEFAULT_IMAGE, memoryLimitMB: 64, port: 11211, progressDeadlineSeconds: 600, ...spec },
});

describe('desiredDeployment', () => {
  it("runs memcached with the spec's memory, port and extra args, owned by the Memcached", () => {
    const d = desiredDeployment(mc({ memoryLimitMB: 256, port: 11311, extraArgs: ['-v'] }));
    const c = d.spec!.template.spec!.containers[0]!;
    expect(c.args).toEqual(['-m', '256', '-p', '11311', '-v']);
    expect(c.ports).toEqual([{ name: 'memcached', containerPort: 11311, protocol: 'TCP' }]);
    expect(d.spec!.replicas).toBe(3);
    expect(d.metadata.ownerReferences).toEqual([
      { apiVersion: 'cache.opkit.dev/v1beta1', kind: 'Memcached', name: 'cache', uid: 'u-1', controller: true, blockOwnerDeletion: true },
    ]);
    expect(d.spec!.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': 'cache' });
  });

  it('passes threads as -t only when the spec sets it (an upgrade must not roll every Memcached)', () => {
    expect(desiredDeployment(mc({ threads: 8, extraArgs: ['-v'] })).spec!.template.spec!.containers[0]?.args).toEqual([
      '-m',
      '64',
      '-p',
      '11211',
      '-t',
      '8',
      '-v',
    ]);
    expect(desiredDeployment(mc()).spec!.template.spec!.containers[0]?.args).toEqual(['-m', '64', '-p', '11211']);
  });

  it('hardens the pod', () => {
    const pod = desiredDeployment(mc()).spec!.template.spec!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]?.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('passes resources through and falls back to the pinned image', () => {
    const d = desiredDeployment(mc({ image: '', resources: { limits: { memory: '128Mi' } } }));
    expect(d.spec!.template.spec!.containers[0]?.image).toBe(DEFAULT_IMAGE);
    expect(d.spec!.template.spec!.containers[0]?.resources).toEqual({ limits: { memory: '128Mi' } });
    expect(DEFAULT_IMAGE).toMatch(/^memcached:1\.6\.\d+-alpine$/);
  });
});

describe('desiredService', () => {
  it('is headless, with the named memcached port', () => {
    const s = desiredService(mc());
    expect(s.spec).toEqual({
      clusterIP: 'None',
      selector: { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': 'cache' },
      ports: [{ name: 'memcached', port: 11211, targetPort: 'memcached', protocol: 'TCP' }],
    });
  });
});
