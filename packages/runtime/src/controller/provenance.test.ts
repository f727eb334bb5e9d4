import { describe, expect, it } from 'vitest';
import { Provenance, triggerLabel, type Trigger } from './provenance.js';

const watch = (name: string, event: 'add' | 'update' | 'delete' = 'update', kind = 'Pod'): Trigger => ({
  source: 'watch',
  kind,
  namespace: 'ns',
  name,
  event,
  at: 1,
});

describe('Provenance', () => {
  it('hands a reconcile every trigger merged into its key, and the next one only later ones', () => {
    const p = new Provenance();
    p.add('ns/a', watch('a', 'add', 'Memcached'));
    p.add('ns/a', watch('a-pod-1'));
    expect(p.take('ns/a').triggers.map((t) => (t.source === 'watch' ? t.name : t.source))).toEqual(['a', 'a-pod-1']);
    p.add('ns/a', { source: 'requeue', after: 30_000, at: 2 });
    expect(p.take('ns/a').triggers).toEqual([{ source: 'requeue', after: 30_000, at: 2 }]);
    expect(p.take('ns/a')).toEqual({ triggers: [], dropped: 0 });
  });

  it('collapses repeats of one event and bounds a burst, counting what it dropped', () => {
    const p = new Provenance();
    for (let i = 0; i < 5; i++) p.add('k', watch('same'));
    expect(p.waiting('k')).toHaveLength(1);
    for (let i = 0; i < 40; i++) p.add('k', watch(`pod-${i}`));
    const taken = p.take('k');
    expect(taken.triggers).toHaveLength(16);
    expect(taken.dropped).toBe(25);
    expect(taken.triggers.at(-1)).toMatchObject({ name: 'pod-39' });
  });

  it('remembers the last reconcile of each key, the least recent out first', () => {
    const p = new Provenance(2);
    const rec = (key: string) => ({ key, reconcileId: key, startedAt: 0, durationMs: 1, result: 'success', triggers: [], dropped: 0 });
    p.record(rec('a'));
    p.record(rec('b'));
    p.record(rec('a'));
    p.record(rec('c'));
    expect(p.last('b')).toBeUndefined();
    expect(p.recent(5).map((r) => r.key)).toEqual(['c', 'a']);
  });

  it('labels triggers for metrics by source and kind, never by object', () => {
    expect(triggerLabel(watch('x', 'update', 'Deployment'))).toBe('watch:Deployment');
    expect(triggerLabel({ source: 'retry', attempt: 2, error: 'boom', at: 0 })).toBe('retry');
  });
});
