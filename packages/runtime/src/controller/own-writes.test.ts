import { describe, expect, it } from 'vitest';
import { ConfigMap, Secret } from '../client/kind.js';
import { OwnWrites } from './own-writes.js';
import type { RecordedWrite } from './read-your-writes.js';

const wrote = (rv: string, name = 'a', kind = ConfigMap): RecordedWrite => ({
  kind,
  key: { namespace: 'ns', name },
  expectation: { kind: 'written', resourceVersion: rv },
});
const obj = (rv: string, name = 'a') => ({ metadata: { namespace: 'ns', name, resourceVersion: rv } });

describe('OwnWrites', () => {
  it('knows exactly the versions we wrote, per kind and object', () => {
    const o = new OwnWrites();
    o.record(wrote('10'));
    o.record(wrote('12'));
    expect(o.isOwn(ConfigMap, obj('10'))).toBe(true);
    expect(o.isOwn(ConfigMap, obj('11'))).toBe(false); // someone else's write in between
    expect(o.isOwn(ConfigMap, obj('12'))).toBe(true);
    expect(o.isOwn(Secret, obj('12'))).toBe(false);
    expect(o.isOwn(ConfigMap, obj('12', 'b'))).toBe(false);
  });
  it('answers every handler of one event alike, and forgets versions the object has moved past', () => {
    const o = new OwnWrites();
    o.record(wrote('10'));
    expect(o.isOwn(ConfigMap, obj('10'))).toBe(true);
    expect(o.isOwn(ConfigMap, obj('10'))).toBe(true);
    expect(o.isOwn(ConfigMap, obj('13'))).toBe(false);
    expect(o.isOwn(ConfigMap, obj('10'))).toBe(false);
  });
  it('ignores deletes', () => {
    const o = new OwnWrites();
    o.record({ kind: ConfigMap, key: { namespace: 'ns', name: 'a' }, expectation: { kind: 'deleted' } });
    expect(o.isOwn(ConfigMap, obj('1'))).toBe(false);
  });

  it('holds events for an object whose write is in flight until the write has returned and been recorded', () => {
    const o = new OwnWrites();
    const judged: boolean[] = [];
    const key = { namespace: 'ns', name: 'a' };
    o.writeStarted(ConfigMap, key);
    // The watch delivers the write's event before the request's answer.
    expect(o.deferred(ConfigMap, obj('20'), () => judged.push(o.isOwn(ConfigMap, obj('20'))))).toBe(true);
    expect(judged).toEqual([]);
    o.record(wrote('20'));
    o.writeEnded(ConfigMap, key);
    expect(judged).toEqual([true]);
    expect(o.deferred(ConfigMap, obj('21'), () => undefined)).toBe(false);
  });
});
