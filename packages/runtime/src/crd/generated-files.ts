import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Generated artifacts (CRD YAML, RBAC) are committed; this writes them, or in check mode lists the
 * ones that differ from what the code would generate now, so a test can fail on stale files.
 */
export function syncGeneratedFiles(files: Record<string, string>, mode: 'write' | 'check'): string[] {
  const stale: string[] = [];
  for (const [path, content] of Object.entries(files)) {
    const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (current === content) continue;
    stale.push(path);
    if (mode === 'write') {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
    }
  }
  return stale;
}
