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
});
