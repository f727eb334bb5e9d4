import { waitFor } from '@opkit/testing';
import { describe, expect, it } from 'vitest';
import { ConfigMap, Namespace } from '../client/kind.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { captureLogger } from '../testing/log-capture.js';
import { EventRecorder, EventsV1Event } from './recorder.js';

type V1Event = { metadata: { name: string }; reason: string; note: string; reportingController: string; series?: { count: number; lastObservedTime: string } };

describe('events.k8s.io/v1 Events with series, against a real API server', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(Namespace, { metadata: { name: 'ev' } });
  });

  it('writes a repeat as a series: begun at once, then counted by the heartbeat, and a new Event once the series has ended', async () => {
    const { admin } = suite;
    const cm = await admin.create(ConfigMap, { metadata: { name: 'noisy', namespace: 'ev' } });
    let now = 1_800_000_000_000;
    const recorder = new EventRecorder(admin, captureLogger().logger, {
      component: 'test-operator',
      instance: 'test-operator-0',
      api: 'events.k8s.io/v1',
      seriesHeartbeatMs: 200,
      seriesFinishMs: 60_000,
      now: () => now,
    });
    const events = async () => (await admin.list(EventsV1Event, { namespace: 'ev' })).items as unknown as V1Event[];

    recorder.warning(cm, 'Flapping', 'the thing flaps');
    await recorder.flush();
    expect(await events()).toMatchObject([{ reason: 'Flapping', note: 'the thing flaps', reportingController: 'test-operator' }]);
    expect((await events())[0]!.series).toBeUndefined();

    now += 1_000;
    recorder.warning(cm, 'Flapping', 'the thing flaps');
    await waitFor('the series begun', async () => (await events())[0]?.series?.count === 2);
    // Eight more: counted, not one write each; the heartbeat writes the count.
    for (let i = 0; i < 8; i++) {
      now += 1_000;
      recorder.warning(cm, 'Flapping', 'the thing flaps');
    }
    await waitFor('the heartbeat to write the count', async () => (await events())[0]?.series?.count === 10, { timeoutMs: 5_000 });
    expect(await events()).toHaveLength(1);

    now += 61_000; // past the series' end
    recorder.warning(cm, 'Flapping', 'the thing flaps');
    await recorder.flush();
    expect((await events()).map((e) => e.series?.count ?? 1).sort()).toEqual([1, 10]);
  });
});
