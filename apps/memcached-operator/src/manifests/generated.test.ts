import { syncGeneratedFiles, undescribedFields } from '@opkit/runtime';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemcachedAPI } from '../api/conversion.js';
import { generatedFiles } from './generate.js';

describe('generated chart files', () => {
  it('match the code (run `nx run @opkit/memcached-operator:generate` after changing the API or RBAC)', () => {
    expect(syncGeneratedFiles(generatedFiles(join(import.meta.dirname, '../../../..')), 'check')).toEqual([]);
  });

  it('describe every field of the CRDs: `kubectl explain` shows no <no description>', () => {
    const missing = Object.fromEntries([MemcachedAPI].map((r) => [r.crd.metadata.name, undescribedFields(r.crd as never)]));
    expect(Object.entries(missing).filter(([, fields]) => fields.length)).toEqual([]);
  });
});
