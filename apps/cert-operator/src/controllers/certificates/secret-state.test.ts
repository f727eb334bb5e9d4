import { describe, expect, it } from 'vitest';
import { pairWriters } from './secret-state.js';

const entry = (manager: string, data?: string[], operation = 'Update') => ({
  manager,
  operation,
  fieldsV1: { 'f:metadata': { 'f:labels': {} }, ...(data ? { 'f:data': Object.fromEntries(data.map((k) => [`f:${k}`, {}])) } : {}) },
});

describe('pairWriters: who other than us wrote the certificate or key (from managedFields)', () => {
  it.each([
    ['nobody: no managedFields', undefined, []],
    ['only us', [entry('cert-operator', ['tls.crt', 'tls.key'], 'Apply')], []],
    ['a tool that wrote the key', [entry('cert-operator', ['tls.crt'], 'Apply'), entry('external-secrets', ['tls.key'])], ['external-secrets']],
    ['a tool that wrote the certificate, and one that wrote only labels', [entry('reflector', ['tls.crt']), entry('argocd')], ['reflector']],
    ['a tool that wrote another data key only: not the pair', [entry('helm', ['extra.conf'])], []],
    ['two writers, each once', [entry('a', ['tls.crt']), entry('b', ['tls.key']), entry('a', ['tls.key'], 'Apply')], ['a', 'b']],
    ['an entry without a manager', [{ fieldsV1: { 'f:data': { 'f:tls.crt': {} } } }], []],
  ])('%s', (_, fields, want) => {
    expect(pairWriters(fields, 'cert-operator')).toEqual(want);
  });
});
