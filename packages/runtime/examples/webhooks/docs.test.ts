import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The webhook examples of docs/runtime.md §7 are these files, which src/webhook/webhooks.int.test.ts
// runs against a real API server: the guide shows what was tested.
describe('docs/runtime.md §7', () => {
  it.each(['gizmo.ts', 'ticket.ts'])('embeds examples/webhooks/%s verbatim', (file) => {
    const doc = readFileSync(join(import.meta.dirname, '../../../../docs/runtime.md'), 'utf8');
    expect(doc).toContain(readFileSync(join(import.meta.dirname, file), 'utf8').trim());
  });
});
