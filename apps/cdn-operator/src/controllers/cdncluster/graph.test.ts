import { describe, expect, it } from 'vitest';
import { findCycle } from './graph.js';

const graph = (edges: Record<string, string[]>) => (n: string) => edges[n];

describe('findCycle', () => {
  it('finds a cycle through the start, naming it in order', () => {
    expect(findCycle('a', graph({ a: ['b'], b: ['a'] }))).toEqual(['a', 'b', 'a']);
    expect(findCycle('a', graph({ a: ['x', 'b'], x: [], b: ['c'], c: ['a'] }))).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle('a', graph({ a: ['a'] }))).toEqual(['a', 'a']);
  });

  it("does not call a wait or a dependency on someone else's cycle a cycle", () => {
    expect(findCycle('a', graph({ a: ['missing'] }))).toBeUndefined();
    expect(findCycle('c', graph({ c: ['a'], a: ['b'], b: ['a'] }))).toBeUndefined();
    expect(findCycle('balancer', graph({ balancer: ['cache-live', 'cache-vod'], 'cache-live': [], 'cache-vod': [] }))).toBeUndefined();
  });

  it('terminates on diamonds and long chains', () => {
    const edges: Record<string, string[]> = { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] };
    for (let i = 0; i < 500; i++) edges[`n${i}`] = [`n${i + 1}`];
    edges.n500 = [];
    expect(findCycle('a', graph(edges))).toBeUndefined();
    expect(findCycle('n0', graph(edges))).toBeUndefined();
  });
});
