import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/types.js';
import { Priority } from '../queue/work-queue.js';
import { finishing, priorityOf } from './event-priority.js';

const obj = (phase?: string): KubeObject => ({ metadata: { name: 'o', namespace: 'ns', labels: phase ? { phase } : {} } });
const done = (o: KubeObject) => o.metadata.labels?.phase === 'Done';

describe('event priorities', () => {
  it.each([
    ['created done', obj('Done'), undefined, Priority.high],
    ['created not done', obj('Running'), undefined, Priority.normal],
    ['becomes done', obj('Done'), obj('Running'), Priority.high],
    ['progress while running', obj('Running'), obj(), Priority.normal],
    ['done, and changed again', obj('Done'), obj('Done'), Priority.normal],
    ['no longer done', obj('Running'), obj('Done'), Priority.normal],
  ])('finishing: %s', (_, now, before, expected) => {
    expect(priorityOf(finishing(done), now, before)).toBe(expected);
  });

  it('a number is every event’s priority; none is normal', () => {
    expect(priorityOf(Priority.high, obj(), obj('Done'))).toBe(Priority.high);
    expect(priorityOf(undefined, obj('Done'), undefined)).toBe(Priority.normal);
  });
});
