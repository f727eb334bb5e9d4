import { syncGeneratedFiles } from '@opkit/runtime';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from './generate.js';

describe('generated chart files', () => {
  it('match the code (run `nx run @opkit/cert-operator:generate` after changing the API or RBAC)', () => {
    expect(syncGeneratedFiles(generatedFiles(join(import.meta.dirname, '../../../..')), 'check')).toEqual([]);
  });
});
