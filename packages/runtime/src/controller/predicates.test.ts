import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/types.js';
import { and, annotationsChanged, generationChanged, hasLabels, labelsChanged, not, or } from './predicates.js';

const o = (generation: number, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject => ({
  metadata: { name: 'x', generation, labels, annotations },
});

describe('predicates', () => {
  it('generationChanged passes spec changes and drops status-only updates', () => {
    const p = generationChanged();
    expect(p.update!(o(1), o(2))).toBe(true);
    expect(p.update!(o(2), o(2))).toBe(false);
    expect(p.create).toBeUndefined(); // creates always pass
  });

  it('labelsChanged and annotationsChanged compare the maps', () => {
    expect(labelsChanged().update!(o(1, { a: '1' }), o(1, { a: '1' }))).toBe(false);
    expect(labelsChanged().update!(o(1, { a: '1' }), o(1, { a: '2' }))).toBe(true);
    expect(annotationsChanged().update!(o(1, {}, {}), o(1, {}, { b: '1' }))).toBe(true);
  });

  it('composes with and, or, not', () => {
    const either = or(generationChanged(), labelsChanged());
    expect(either.update!(o(1, { a: '1' }), o(1, { a: '2' }))).toBe(true);
    expect(either.update!(o(1), o(1))).toBe(false);
    const both = and(generationChanged(), labelsChanged());
    expect(both.update!(o(1, { a: '1' }), o(2, { a: '1' }))).toBe(false);
    expect(not(generationChanged()).update!(o(1), o(1))).toBe(true);
    expect(and(hasLabels({ team: 'a' }), generationChanged()).create!(o(1, { team: 'a' }))).toBe(true);
    expect(hasLabels({ team: 'a' }).delete!(o(1, { team: 'b' }))).toBe(false);
  });
});
