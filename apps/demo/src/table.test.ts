import { describe, expect, it } from 'vitest';
import { changes, indexRows, renderTable, type Row } from './table.js';

const row = (kind: string, name: string, status: string, detail = '', done = false): Row => ({ kind, name, status, detail, done });

describe('the demo status table', () => {
  it('aligns columns and marks converged rows', () => {
    const text = renderTable([
      row('Memcached', 'demo/memcached-sample', 'Available', '3/3 ready', true),
      row('Certificate', 'demo/shop', 'Issuing', 'waiting'),
    ]);
    expect(text.split('\n')).toEqual([
      'KIND         NAME                   STATUS       DETAIL',
      'Memcached    demo/memcached-sample  ✓ Available  3/3 ready',
      'Certificate  demo/shop              … Issuing    waiting',
    ]);
  });

  it('cuts a long detail to the width given', () => {
    const [, line = ''] = renderTable([row('K', 'n', 's', 'x'.repeat(200))], 40).split('\n');
    expect(line.length).toBe(40);
    expect(line.endsWith('…')).toBe(true);
  });

  it('reports only what changed, for logs', () => {
    const before = indexRows([row('A', 'a', 'Pending'), row('B', 'b', 'Ready'), row('C', 'c', 'Ready')]);
    const { changed, gone } = changes(before, [row('A', 'a', 'Running'), row('B', 'b', 'Ready'), row('D', 'd', 'New')]);
    expect(changed.map((r) => r.name)).toEqual(['a', 'd']);
    expect(gone).toEqual(['C c']);
  });
});
