// Resident memory of an idle manager with one controller: the operator bundled as in its image,
// started against a real API server, measured after it settles.
import { Client, Namespace, Transport } from '@opkit/runtime';
import { startControlPlane, waitFor } from '@opkit/testing';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { table } from '../report.js';

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function main() {
  // The same bundler the operator images use (tools/build/bundle.mjs), with and without its shims.
  const { bundle } = (await import(join(process.cwd(), 'tools/build/bundle.mjs'))) as { bundle: (e: string, o: string, opts?: object) => Promise<unknown> };
  const entry = join(process.cwd(), 'bench/runtime/fixtures/idle-operator.ts');
  const plain = join(process.cwd(), 'dist/bench/idle-operator-plain.cjs');
  const shimmed = join(process.cwd(), 'dist/bench/idle-operator.cjs');
  await bundle(entry, plain, { useShims: false });
  await bundle(entry, shimmed);
  const plane = await startControlPlane();
  try {
    await new Client(new Transport(plane.kubeConfig), { fieldManager: 'bench' }).create(Namespace, { metadata: { name: 'idle' } });
    const rows = [];
    const configs: [string, string, string[], Record<string, string>][] = [
      ['plain bundle', plain, [], {}],
      ['opkit bundle (shims)', shimmed, [], {}],
      ['opkit bundle (shims)', shimmed, ['--max-semi-space-size=2'], {}],
      ['opkit bundle (shims)', shimmed, [], { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' }],
      ['opkit bundle (shims)', shimmed, [], { MALLOC_TRIM_THRESHOLD_: '0' }],
    ];
    for (const [label, out, flags, env] of configs) {
      const child = spawn(process.execPath, [...flags, out, `--kubeconfig=${plane.kubeconfigPath}`, '--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0'], {
        env: { ...process.env, WATCH_NAMESPACE: 'idle', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      let mem: Record<string, number> = {};
      child.stdout!.on('data', (d) => (log += d));
      child.stderr!.on('data', (d: Buffer) => {
        const m = /MEM (\{.*\})/.exec(d.toString());
        if (m) mem = JSON.parse(m[1]);
      });
      await waitFor('the operator to start', () => log.includes('controller started'), { timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 10_000));
      const samples = [];
      for (let i = 0; i < 5; i++) {
        samples.push(rssMiB(child.pid!));
        await new Promise((r) => setTimeout(r, 1_000));
      }
      child.kill('SIGTERM');
      await new Promise((r) => child.on('exit', r));
      const m = (k: string) => Math.round(((mem[k] ?? 0) / 1048576) * 10) / 10;
      rows.push({
        bundle: label,
        'node flags / env': [...flags, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].join(' ') || '(none)',
        'bundle MiB': Math.round((statSync(out).size / 1048576) * 10) / 10,
        'idle RSS MiB (median of 5)': Math.round(samples.sort((a, b) => a - b)[2] * 10) / 10,
        'V8 heap used/total MiB': `${m('heapUsed')} / ${m('heapTotal')}`,
        'external MiB': m('external'),
      });
    }
    table(rows);
    console.log('target: idle RSS <= 80 MiB per operator (a bare `node` process is ~40 MiB)');
  } finally {
    await plane.stop();
  }
}
void main();
