import { describe, expect, it } from 'vitest';
import type { Client } from '../client/client.js';
import { silentLogger } from '../log/logger.js';
import { EventRecorder } from './recorder.js';

/** Records what would be written; the recorder's memory is what is under test here. */
const fakeClient = () => {
  const writes: string[] = [];
  const client = {
    create: async (_k: unknown, obj: { metadata: { name: string } }) => (writes.push(`create ${obj.metadata.name}`), obj),
    patch: async (_k: unknown, key: { name: string }) => (writes.push(`patch ${key.name}`), {}),
  } as unknown as Client;
  return { client, writes };
};

const obj = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: `uid-${name}` } });

describe('EventRecorder', () => {
  it('aggregates a repeated event into one Event with a count', async () => {
    const { client, writes } = fakeClient();
    const r = new EventRecorder(client, silentLogger(), { component: 'test' });
    for (let i = 0; i < 3; i++) {
      r.warning(obj('a'), 'ReconcileError', 'forbidden');
      await r.flush();
    }
    expect(writes.filter((w) => w.startsWith('create'))).toHaveLength(1);
    expect(writes.filter((w) => w.startsWith('patch'))).toHaveLength(2);
  });

  it('forgets objects once their aggregation window and spam budget have passed', async () => {
    const { client } = fakeClient();
    let now = 1_000_000;
    const r = new EventRecorder(client, silentLogger(), { component: 'test', now: () => now });
    for (let i = 0; i < 2_000; i++) r.normal(obj(`o${i}`), 'Created', 'made it');
    await r.flush();
    expect(r.tracked).toBe(2_000);
    now += 60 * 60_000; // an hour later: every window has closed and every bucket is full again
    r.normal(obj('fresh'), 'Created', 'made it');
    await r.flush();
    expect(r.tracked).toBe(1);
  });

  // 10,000 Certificates issued at once left 50,000 aggregation keys (each a 200-character string
  // tree) and 10,000 spam budgets in memory for ten minutes: 40 MiB of a 207 MiB heap. client-go
  // bounds both with an LRU of 4,096 entries.
  it('remembers at most maxTracked events and objects, the least recently used forgotten first', async () => {
    const { client, writes } = fakeClient();
    const r = new EventRecorder(client, silentLogger(), { component: 'test', maxTracked: 100 });
    for (let i = 0; i < 300; i++) {
      r.normal(obj(`o${i}`), 'Issuing', 'started');
      r.normal(obj(`o${i}`), 'Issued', 'done');
    }
    await r.flush();
    expect(r.tracked).toBeLessThanOrEqual(100);
    expect(r.aggregations).toBeLessThanOrEqual(100);
    writes.length = 0;
    // The most recent repeats aggregate; one long forgotten is a new Event, as client-go's.
    r.normal(obj('o299'), 'Issued', 'done');
    r.normal(obj('o0'), 'Issued', 'done');
    await r.flush();
    expect(writes).toEqual([expect.stringMatching(/^patch o299\./), expect.stringMatching(/^create o0\./)]);
  });

  it('forgets events.k8s.io/v1 series that ended, repeated or not', async () => {
    const { client } = fakeClient();
    let now = 1_000_000;
    const r = new EventRecorder(client, silentLogger(), { component: 'test', api: 'events.k8s.io/v1', now: () => now });
    for (let i = 0; i < 500; i++) r.normal(obj(`o${i}`), 'Created', 'made it');
    await r.flush();
    expect(r.aggregations).toBe(500);
    now += 60 * 60_000;
    r.normal(obj('fresh'), 'Created', 'made it');
    await r.flush();
    expect(r.aggregations).toBe(1);
  });
});
