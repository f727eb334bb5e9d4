import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../client/errors.js';
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

/** Every watch opens (200), then its stream breaks at once: an API server that accepts and resets. */
const opensThenFails = () => {
  let opens = 0;
  const transport = {
    request: async () => ({ metadata: { resourceVersion: '7' }, items: [] }),
    stream: async () => {
      opens++;
      await new Promise((r) => setImmediate(r));
      const res = new PassThrough();
      setImmediate(() => res.destroy(new Error('read ECONNRESET')));
      return res;
    },
  } as unknown as Transport;
  return { transport, opens: () => opens };
};

/** The API server is behind the version the watcher resumes from (an etcd restored from a backup). */
const behindTheWatcher = () => {
  const asked: string[] = [];
  let lists = 0;
  const transport = {
    request: async () => ({ metadata: { resourceVersion: String(900 + lists++) }, items: [] }),
    stream: async (spec: RequestSpec) => {
      asked.push(String(spec.query?.resourceVersion));
      await new Promise((r) => setImmediate(r));
      throw new ApiError('GET', '/api/v1/configmaps', 504, {
        kind: 'Status',
        code: 504,
        reason: 'Timeout',
        message: `Too large resource version: ${spec.query?.resourceVersion}, current: 120`,
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
      });
    },
  } as unknown as Transport;
  return { transport, asked, lists: () => lists };
};

const sink = { replace: () => undefined, event: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Watcher', () => {
  it('backs off a watch that opens and fails at once, and does not turn healthy on each open', async () => {
    const { transport, opens } = opensThenFails();
    const w = new Watcher(transport, ConfigMap, sink, silentLogger(), { backoffMs: { initial: 100, max: 2_000 } });
    w.start();
    const samples: number[] = [];
    for (let i = 0; i < 150; i++) {
      await sleep(20);
      samples.push(w.health.failures);
    }
    await w.stop();
    // Doubling from 100 ms: about 6 attempts in 3 s. Reset by every open, it was one every ~100 ms.
    expect(opens()).toBeLessThanOrEqual(7);
    // Readiness reads `failures`: once failing, it must not read healthy between two failed attempts.
    const first = samples.findIndex((f) => f > 0);
    expect(samples.slice(first).filter((f) => f === 0)).toEqual([]);
  });

  it('relists when the API server is behind the resourceVersion, instead of asking for it again and again', async () => {
    const { transport, asked, lists } = behindTheWatcher();
    // Paginated LISTs (these fakes serve LISTs); the decision is the same after a streamed list.
    const w = new Watcher(transport, ConfigMap, sink, silentLogger(), { backoffMs: { initial: 100, max: 1_000 }, timing: { streamingLists: false } });
    w.start();
    await sleep(1_500);
    await w.stop();
    expect(lists()).toBeGreaterThanOrEqual(2);
    // Each watch resumes from a fresh LIST's version: none is asked for twice.
    expect(new Set(asked).size).toBe(asked.length);
  });

  it('backs off between relists when every watch answers 410 Gone', async () => {
    const { transport, lists } = alwaysGone();
    const w = new Watcher(transport, ConfigMap, { replace: () => undefined, event: () => undefined }, silentLogger(), {
      backoffMs: { initial: 200, max: 1_000 },
      timing: { streamingLists: false },
    });
    w.start();
    await new Promise((r) => setTimeout(r, 2_000));
    await w.stop();
    // Without a backoff this loop relists hundreds of times a second.
    expect(lists()).toBeGreaterThanOrEqual(2);
    expect(lists()).toBeLessThanOrEqual(8);
  });
});
