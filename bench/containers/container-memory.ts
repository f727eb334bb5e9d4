import type { E2ECluster } from '@opkit/testing';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A container's memory as the kubelet reports it (the working set is what a memory limit is held
 * against). The node's summary is refreshed every ~10 s, so this is the median of three reads
 * 10 s apart. `container` names the container; the pod's first when left out.
 */
export async function containerMemory(c: E2ECluster, pod: string, container?: string): Promise<{ ws: number; rss: number }> {
  const node = (await c.kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).stdout.trim();
  const reads: { ws: number; rss: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const summary = JSON.parse((await c.kubectl(['get', '--raw', `/api/v1/nodes/${node}/proxy/stats/summary`])).stdout) as {
      pods: { podRef: { name: string }; containers?: { name: string; memory?: { workingSetBytes?: number; rssBytes?: number } }[] }[];
    };
    const containers = summary.pods.find((p) => p.podRef.name === pod)?.containers ?? [];
    const m = (container === undefined ? containers[0] : containers.find((x) => x.name === container))?.memory;
    reads.push({ ws: m?.workingSetBytes ?? 0, rss: m?.rssBytes ?? 0 });
    await sleep(10_000);
  }
  const [, median = { ws: 0, rss: 0 }] = reads.sort((a, b) => a.ws - b.ws);
  return median;
}
