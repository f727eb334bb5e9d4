import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigMap } from '../client/kind.js';
import type { RequestSpec, Transport } from '../client/transport.js';
import { silentLogger } from '../log/logger.js';
import { Watcher } from './watcher.js';

/**
 * A transport whose every watch ends at once with 410 Gone (an etcd compacted faster than the
 * watcher can resume): the worst case for a relist loop. Unit level on purpose: the decision under
 * test is the watcher's, and no real API server keeps answering 410 on demand.
 */
const alwaysGone = () => {
  let lists = 0;
  const transport = {
    request: async (spec: RequestSpec) => {
      if (spec.method === 'GET') lists++;
      return { metadata: { resourceVersion: String(lists) }, items: [] };
    },
    stream: async () => {
      await new Promise((r) => setImmediate(r)); // a network round trip: timers get their turn
      const res = new PassThrough();
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } })}\n`);
      return res;
    },
  } as unknown as Transport;
  return { transport, lists: () => lists };
};

describe('Watcher', () => {
  it('backs off between relists when every watch answers 410 Gone', async () => {
    const { transport, lists } = alwaysGone();
    const w = new Watcher(transport, ConfigMap, { replace: () => undefined, event: () => undefined }, silentLogger(), { backoffMs: { initial: 200, max: 1_000 } });
    w.start();
    await new Promise((r) => setTimeout(r, 2_000));
    await w.stop();
    // Without a backoff this loop relists hundreds of times a second.
    expect(lists()).toBeGreaterThanOrEqual(2);
    expect(lists()).toBeLessThanOrEqual(8);
  });
});
