// The HTTP-01 solver's memory in its container: a solver pod exactly as the cert operator makes it
// (solverPod: hardened, its default requests and limits), in kind, read by the kubelet from the
// container's cgroup, idle and after it has answered requests; next to the same bundle as a host
// process on the image's Node 24. The limit must leave at least half again the working set.
import { imageNodeBinary } from '@opkit/testing/containers';
import { requireBuilt, runInCluster, startE2ECluster, waitFor, workspaceApp } from '@opkit/testing';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import type { ChallengeObject } from '../../apps/cert-operator/src/api/acme/v1/challenge.js';
import { solverPod } from '../../apps/cert-operator/src/acme/solver-resources.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';
import { processMemory } from '../process-stats.js';
import { containerMemory } from './container-memory.js';
import { mib, table, runBench } from '../report.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NS = 'solver-bench';

const challenge = {
  apiVersion: 'acme.cert.opkit.dev/v1',
  kind: 'Challenge',
  metadata: { name: 'bench', namespace: NS, uid: '00000000-0000-0000-0000-000000000001' },
  spec: {
    url: 'https://ca.test/chall/1',
    authorizationURL: 'https://ca.test/authz/1',
    dnsName: 'bench.example.test',
    type: 'HTTP-01',
    token: 'tok',
    key: 'tok.thumb',
    solver: { http01: { ingress: {} } },
    issuerRef: { name: 'x' },
  },
} as unknown as ChallengeObject;

/** The solver container's memory from the kubelet's summary (median of three reads, ~10 s apart). */
async function hostMemory(node: string, bundle: string) {
  const child = spawn(node, [bundle, '--listen-port=18089', '--domain=bench.example.test', '--token=tok', '--key=tok.thumb'], { stdio: 'ignore' });
  try {
    await sleep(1_000);
    for (let i = 0; i < 200; i++)
      await fetch('http://127.0.0.1:18089/.well-known/acme-challenge/tok', { headers: { host: 'bench.example.test' } }).then((r) => r.text());
    await sleep(2_000);
    return processMemory(child.pid!);
  } finally {
    child.kill('SIGTERM');
  }
}

async function main() {
  const app = workspaceApp('acme-solver');
  requireBuilt([app]);
  const cluster = await startE2ECluster('kind', { apps: [app], workloads: ['shell'] });
  const rows: Record<string, string | number>[] = [];
  try {
    await cluster.kubectl(['create', 'namespace', NS]);
    const pod = solverPod(CERT_APIS.opkit, challenge, `${app.image.repository}:${app.image.tag}`);
    delete (pod.metadata as { ownerReferences?: unknown }).ownerReferences;
    pod.metadata.name = 'solver';
    delete pod.metadata.generateName;
    await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
    await waitFor(
      'the solver pod Ready',
      async () => (await cluster.kubectl(['get', 'pod/solver', '-n', NS, '-o', 'jsonpath={.status.containerStatuses[0].ready}'])).stdout === 'true',
      { timeoutMs: 120_000 },
    );
    const limit = pod.spec!.containers[0]!.resources!.limits!.memory as string;
    const limitBytes = Number(/^(\d+)Mi$/.exec(limit)![1]) * 1024 * 1024;
    const idle = await containerMemory(cluster, 'solver');
    const ip = (await cluster.kubectl(['get', 'pod/solver', '-n', NS, '-o', 'jsonpath={.status.podIP}'])).stdout.trim();
    // What a CA's validators do, many times over: GET the token with the domain as Host.
    await runInCluster(cluster, {
      namespace: NS,
      script: `for i in $(seq 1 500); do exec 3<>/dev/tcp/${ip}/8089; printf 'GET /.well-known/acme-challenge/tok HTTP/1.1\\r\\nHost: bench.example.test\\r\\nConnection: close\\r\\n\\r\\n' >&3; cat <&3 >/dev/null; exec 3<&-; done; echo done`,
    });
    const served = await containerMemory(cluster, 'solver');
    const restarts = (await cluster.kubectl(['get', 'pod/solver', '-n', NS, '-o', 'jsonpath={.status.containerStatuses[0].restartCount}'])).stdout;
    const host = await hostMemory(await imageNodeBinary(), app.bundle);
    for (const [when, m] of [
      ['idle', idle],
      ['after 500 validations', served],
    ] as const) {
      rows.push({
        when,
        'working set MiB': mib(m.ws),
        'rss MiB': mib(m.rss),
        limit,
        'headroom over the working set': `${Math.round((limitBytes / m.ws - 1) * 100)} %`,
        restarts,
      });
    }
    rows.push({
      when: "host process, Node 24 (the image's), after 200 requests",
      'working set MiB': '',
      'rss MiB': `${mib(host.rss)} (VmRSS) / ${mib(host.anon)} (RssAnon)`,
      limit: '',
      'headroom over the working set': '',
      restarts: '',
    });
  } finally {
    await cluster.stop();
  }
  table(rows);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; the express solver measured 63.5 MB (issue 14)`,
  );
}

runBench(main);
