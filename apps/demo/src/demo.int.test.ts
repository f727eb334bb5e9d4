import { run, waitFor, workspaceRoot } from '@opkit/testing';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Lines of `ps` that mention the demo's directory: its etcd, kube-apiserver, operators, Pebble. */
async function processesIn(dir: string): Promise<string[]> {
  const ps = await run('ps', ['-eo', 'args'], { check: false });
  return ps.stdout.split('\n').filter((l) => l.includes(dir));
}

describe('npm run demo', () => {
  it("the README's command, in a real terminal: brings up the cluster, the three operators and the samples, converges, and stops leaving nothing running", async () => {
    // `script` gives the command a pseudo-terminal, as a user's shell would: nx prompts there (its
    // "Share usage data?" question) where CI never sees it. CI=false: nx skips prompts under CI.
    const nxJson = readFileSync(`${workspaceRoot()}/nx.json`, 'utf8');
    const r = await run('script', ['-qefc', 'npm run demo -- --exit-when-ready --timeout=150', '/dev/null'], {
      cwd: workspaceRoot(),
      check: false,
      timeoutMs: 170_000,
      input: '',
      env: { ...process.env, CI: 'false', TERM: 'xterm' },
    });
    const out = r.stdout + r.stderr;
    expect(out).not.toMatch(/Share usage data/);
    expect(r.code, out).toBe(0);
    expect(readFileSync(`${workspaceRoot()}/nx.json`, 'utf8')).toBe(nxJson);
    expect(out).toMatch(/all samples converged/i);
    for (const line of [
      /Memcached\s+demo\/memcached-sample\s+✓ Available/,
      /CdnCluster\s+demo\/balancer\s+✓ Running/,
      /Certificate\s+demo\/shop\s+✓ Ready/,
      /Operator\s+opkit-system\/cert\s+✓ Ready/,
    ]) {
      expect(out).toMatch(line);
    }
    expect(out).toMatch(/stopped; nothing is left running/);
    // Its processes are gone: no etcd, kube-apiserver or Pebble from the demo's directory.
    const dir = out.match(/kubeconfig: (\/\S+)\/kubeconfig/)![1]!;
    expect(await processesIn(dir)).toEqual([]);
  });

  it('stops cleanly on Ctrl-C while it runs, leaving nothing behind', async () => {
    // A terminal's Ctrl-C signals the whole foreground process group: so does this test.
    const child = spawn(process.execPath, ['tools/build/run-ts.mjs', 'apps/demo/src/main.ts'], {
      cwd: workspaceRoot(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor('the demo to converge', () => /all samples converged/.test(out), { timeoutMs: 150_000, intervalMs: 250 });
      const dir = out.match(/kubeconfig: (\/\S+)\/kubeconfig/)![1]!;
      expect(await processesIn(dir)).not.toEqual([]);
      process.kill(-child.pid!, 'SIGINT');
      expect(await exited, out).toBe(0);
      expect(out).toMatch(/stopped; nothing is left running/);
      expect(await processesIn(dir)).toEqual([]);
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
  });
});
