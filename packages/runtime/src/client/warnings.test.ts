import { describe, expect, it } from 'vitest';
import { MAX_WARNING_CHARS, parseWarnings, resourceOfPath } from './warnings.js';

describe('parseWarnings', () => {
  const cases: [string, string | string[] | undefined, string[]][] = [
    ['none', undefined, []],
    ["the API server's form", '299 - "example.com/v1 Widget is deprecated; use v2"', ['example.com/v1 Widget is deprecated; use v2']],
    ['two, joined by Node', '299 - "a, with a comma", 299 - "b"', ['a, with a comma', 'b']],
    ['two headers', ['299 - "a"', '299 - "b"'], ['a', 'b']],
    ['escaped quotes', '299 - "say \\"hi\\""', ['say "hi"']],
    ['with a date', '299 - "a" "Thu, 01 Jan 1970 00:00:00 GMT", 299 - "b"', ['a', 'b']],
    ['other codes dropped', '199 - "misc", 299 - "kept"', ['kept']],
    ['unterminated: what came before is kept', '299 - "a", 299 - "b', ['a']],
    ['garbage', 'not a warning', []],
  ];
  it.each(cases)('%s', (_, header, want) => expect(parseWarnings(header)).toEqual(want));

  it('cuts a long text', () => {
    expect(parseWarnings(`299 - "${'x'.repeat(5_000)}"`)[0]).toHaveLength(MAX_WARNING_CHARS + 1);
  });
});

describe('resourceOfPath', () => {
  it.each([
    ['/api/v1/namespaces/ns/pods/p', 'pods'],
    ['/api/v1/namespaces/ns', 'namespaces'],
    ['/apis/apps/v1/namespaces/ns/deployments?limit=500', 'deployments.apps'],
    ['/apis/example.com/v1/widgets', 'widgets.example.com'],
    ['/apis/example.com/v1/namespaces/ns/widgets/w/status', 'widgets.example.com'],
    ['/version', '/version'],
  ])('%s → %s', (path, want) => expect(resourceOfPath(path)).toBe(want));
});
