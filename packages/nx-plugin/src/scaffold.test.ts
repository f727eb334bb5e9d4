import { createTree } from '@nx/devkit/testing.js';
import { describe, expect, it } from 'vitest';
import { insertAtMarker } from './scaffold.js';

const file = ['export const LIST = [', '  a,', '  // +opkit:scaffold:items', '];', ''].join('\n');

describe('insertAtMarker', () => {
  it('adds the line above the marker, indented like it, once however often it runs', () => {
    const tree = createTree();
    tree.write('list.ts', file);
    insertAtMarker(tree, 'list.ts', 'items', 'b,');
    insertAtMarker(tree, 'list.ts', 'items', 'b,');
    expect(tree.read('list.ts', 'utf8')).toBe(['export const LIST = [', '  a,', '  b,', '  // +opkit:scaffold:items', '];', ''].join('\n'));
  });

  it('says what to do when the file or its marker is gone', () => {
    const tree = createTree();
    expect(() => insertAtMarker(tree, 'list.ts', 'items', 'b,')).toThrow(/list\.ts is missing/);
    tree.write('list.ts', 'export const LIST = [a];\n');
    expect(() => insertAtMarker(tree, 'list.ts', 'items', 'b,')).toThrow(/no line "\/\/ \+opkit:scaffold:items": put it back/);
  });
});
