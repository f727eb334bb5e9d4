import { waitFor } from '@opkit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigMap, Namespace } from '../client/kind.js';
import { recordingManager, scrape } from '../testing/harness.js';
import type { Manager } from './manager.js';
import { useControlPlane } from '../testing/control-plane-suite.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The API server process stops (SIGSTOP) with every connection open: nothing is refused, nothing
 * answers. This is what a wedged host or a stalled load balancer looks like to an operator.
 */
describe('a hung API server', () => {
  const suite = useControlPlane();
  let manager: Manager | undefined;
  afterAll(async () => {
    suite.plane?.apiServer.thaw();
    await manager?.stop();
  });

  it('turns /cachez red (not /readyz) within 15 s of a 20 s hang, green again after it, and loses no change', async () => {
    await suite.admin.create(Namespace, { metadata: { name: 'hung' } });
    await suite.admin.create(ConfigMap, { metadata: { name: 'a', namespace: 'hung' }, data: { v: '1' } });
    const { manager: m, state: seen } = recordingManager(suite.plane.kubeConfig, 'hung');
    manager = m;
    await manager.start();
    await waitFor('the initial state', () => seen.get('a') === '1');
    expect((await scrape(manager, '/cachez')).status).toBe(200);

    const frozenAt = Date.now();
    let readyRed = false;
    suite.plane.apiServer.freeze();
    const red = await waitFor(
      '/cachez to go red while the API server hangs',
      async () => {
        if ((await scrape(manager!, '/readyz')).status !== 200) readyRed = true;
        const res = await scrape(manager!, '/cachez');
        return res.status === 500 && res.body;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const redAfterMs = Date.now() - frozenAt;
    console.log(`/cachez red ${redAfterMs} ms after the API server hung`);
    expect(redAfterMs).toBeLessThanOrEqual(15_000);
    expect(red).toMatch(/\[-\]apiserver failed: .*no answer/);
    expect(readyRed).toBe(false);

    await sleep(Math.max(0, 20_000 - (Date.now() - frozenAt)));
    suite.plane.apiServer.thaw();
    const thawedAt = Date.now();
    await suite.admin.patch(ConfigMap, { namespace: 'hung', name: 'a' }, { data: { v: '2' } });
    await suite.admin.create(ConfigMap, { metadata: { name: 'b', namespace: 'hung' }, data: { v: '1' } });
    await waitFor('changes made after the hang to be reconciled', () => seen.get('a') === '2' && seen.get('b') === '1', { timeoutMs: 30_000 });
    await waitFor('/cachez to be green again', async () => (await scrape(manager!, '/cachez')).status === 200, { timeoutMs: 15_000, intervalMs: 250 });
    console.log(`converged and ready ${Date.now() - thawedAt} ms after the API server answered again`);
    expect(manager.running).toBe(true);
  });
});
