// Idle memory of each operator with an empty cache: its bundle (as the image ships it) started
// against a real API server with its CRDs installed and nothing to do, measured after it settles,
// on this machine's Node and on the image's Node 24. Next to a bare `node` on each, the floor no
// operator can go below. RssAnon is the process's own memory; RssFile is mapped code (mostly the
// node binary), which a container's working set counts too. Each operator runs on the allocator its
// image preloads (jemalloc, where this machine has Debian's libjemalloc2) and on glibc's malloc.
//   OPKIT_BENCH_IDLE_APPS=memcached-operator,cdn-operator,cert-operator (default)
//   OPKIT_BENCH_NODE_ARGS='--max-semi-space-size=1'   node flags for the operator processes (V8 settings to try)
//   OPKIT_BENCH_IDLE_MALLOC_CONF='narenas:1|narenas:1,tcache:false'   jemalloc settings to try beside the image's, '|'-separated
import { imageNodeBinary } from '@opkit/testing/containers';
import { helmTemplate, kubectlApply, startControlPlane, waitFor, workspaceApp, workspaceRoot } from '@opkit/testing';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { allocatorOf, median, processMemory } from '../process-stats.js';
import { table, runBench } from '../report.js';

const r1 = (x: number) => Math.round(x * 10) / 10;
const version = (node: string) =>
  new Promise<string>((resolve) => {
    let out = '';
    spawn(node, ['--version'])
      .stdout.on('data', (d) => (out += d))
      .on('end', () => resolve(out.trim()));
  });

/** Samples a process five times, a second apart, after it has settled: medians in MiB. */
async function sample(pid: number) {
  const xs: ReturnType<typeof processMemory>[] = [];
  for (let i = 0; i < 5; i++) {
    xs.push(processMemory(pid));
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const mib = (k: 'rss' | 'anon' | 'file') => median(xs.map((x) => x[k])) / 2 ** 20;
  return { rss: mib('rss'), anon: mib('anon'), file: mib('file') };
}

async function main() {
  const { bundle } = (await import(join(workspaceRoot(), 'tools/build/bundle.mjs'))) as { bundle: (e: string, o: string) => Promise<unknown> };
  const apps = (process.env.OPKIT_BENCH_IDLE_APPS ?? 'memcached-operator,cdn-operator,cert-operator').split(',');
  const nodes: [string, string][] = [];
  for (const bin of [process.execPath, await imageNodeBinary()]) nodes.push([bin, await version(bin)]);
  const plane = await startControlPlane();
  const rows: Record<string, string | number>[] = [];
  try {
    for (const [bin, v] of nodes) {
      const child = spawn(bin, ['-e', 'setInterval(() => {}, 1 << 30)']);
      await new Promise((r) => setTimeout(r, 3_000));
      const m = await sample(child.pid!);
      child.kill();
      rows.push({
        process: 'bare node',
        node: v,
        malloc: "glibc's malloc",
        'bundle MB': '',
        'VmRSS MiB': r1(m.rss),
        'RssAnon MiB': r1(m.anon),
        'RssFile MiB': r1(m.file),
      });
    }
    for (const app of apps) {
      const a = workspaceApp(app);
      const out = join(workspaceRoot(), `dist/bench/idle-${app}/main.js`);
      await bundle(join(workspaceRoot(), `apps/${app}/src/main.ts`), out);
      const crds = parseAllDocuments(await helmTemplate(a.chart!, {}))
        .map((d) => d.toJSON() as { kind?: string })
        .filter((o) => o?.kind === 'CustomResourceDefinition');
      await kubectlApply(plane.kubeconfigPath, crds.map((o) => JSON.stringify(o)).join('\n---\n'));
      await plane.kubectl(['create', 'namespace', `idle-${app}`]);
      // The image's allocator where it preloads one (and this machine has it), and glibc's malloc.
      const { LD_PRELOAD, ...glibcEnv } = a.local.env;
      const tried = (process.env.OPKIT_BENCH_IDLE_MALLOC_CONF ?? '').split('|').filter(Boolean);
      const envs: Record<string, string>[] = LD_PRELOAD
        ? [a.local.env, ...tried.map((MALLOC_CONF) => ({ ...a.local.env, MALLOC_CONF })), glibcEnv]
        : [glibcEnv];
      for (const [bin, v] of nodes) {
        for (const env of envs) {
          const child = spawn(
            bin,
            [
              ...(process.env.OPKIT_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
              out,
              `--kubeconfig=${plane.kubeconfigPath}`,
              '--metrics-bind-address=127.0.0.1:0',
              '--metrics-secure',
              '--health-probe-bind-address=127.0.0.1:0',
              '--webhook-bind-address=127.0.0.1:0',
            ],
            {
              // With the environment the image sets (apps/Dockerfile: NODE_OPTIONS, malloc settings).
              env: { ...process.env, ...env, WATCH_NAMESPACE: `idle-${app}`, POD_NAMESPACE: `idle-${app}` },
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
          let log = '';
          child.stdout!.on('data', (d) => (log += d));
          child.stderr!.on('data', (d) => (log += d));
          await waitFor(
            `${app} to start`,
            () => {
              if (child.exitCode !== null) throw new Error(`${app} exited: ${log.slice(-2000)}`);
              return log.includes('controller started');
            },
            { timeoutMs: 60_000 },
          );
          await new Promise((r) => setTimeout(r, 10_000));
          const m = await sample(child.pid!);
          child.kill('SIGTERM');
          await new Promise((r) => child.on('exit', r));
          rows.push({
            process: app,
            node: v,
            malloc: allocatorOf(env).replace(/^allocator /, ''),
            'bundle MB': r1(statSync(out).size / 1e6),
            'VmRSS MiB': r1(m.rss),
            'RssAnon MiB': r1(m.anon),
            'RssFile MiB': r1(m.file),
          });
        }
      }
    }
  } finally {
    await plane.stop();
  }
  table(rows);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; target: each operator <= 60 MiB VmRSS idle (issue 18)`,
  );
}

runBench(main);
