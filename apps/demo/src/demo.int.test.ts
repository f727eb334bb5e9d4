import { run, workspaceRoot } from '@opkit/testing';
import { describe, expect, it } from 'vitest';

describe('npm run demo', () => {
  it('brings up the cluster, the three operators and the samples, converges, and stops leaving nothing running', async () => {
    const root = workspaceRoot();
    const r = await run(process.execPath, ['tools/build/run-ts.mjs', 'apps/demo/src/main.ts', '--exit-when-ready', '--timeout=240'], { cwd: root, check: false, timeoutMs: 300_000 });
    const out = r.stdout + r.stderr;
    expect(r.code, out).toBe(0);
    expect(out).toMatch(/all samples converged/);
    for (const line of [/Memcached\s+demo\/memcached-sample\s+✓ Available/, /CdnCluster\s+demo\/balancer\s+✓ Running/, /Certificate\s+demo\/shop\s+✓ Ready/, /Operator\s+opkit-system\/cert\s+✓ Ready/]) {
      expect(out).toMatch(line);
    }
    expect(out).toMatch(/stopped; nothing is left running/);
    // Its processes are gone: no etcd, kube-apiserver or Pebble from the demo's directory.
    const dir = out.match(/kubeconfig: (\/\S+)\/kubeconfig/)![1];
    const ps = await run('ps', ['-eo', 'args'], { check: false });
    expect(ps.stdout.split('\n').filter((l) => l.includes(dir))).toEqual([]);
  });
});
