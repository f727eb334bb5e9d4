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

/**
 * The body of an operator's `generate` command: writes the files, or with `--check` in `argv` lists
 * the stale ones and exits 1, naming the command that regenerates them.
 */
export function generatedFilesCommand(files: Record<string, string>, generator: string, argv: string[] = process.argv): void {
  const check = argv.includes('--check');
  const stale = syncGeneratedFiles(files, check ? 'check' : 'write');
  if (check && stale.length) {
    console.error(`stale generated files (run: ${generator}):\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  console.log(stale.length ? `${check ? 'stale' : 'wrote'}:\n  ${stale.join('\n  ')}` : 'generated files are up to date');
}
