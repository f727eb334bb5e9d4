import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The command that runs one seed of a fault test again: `testFile` is the test's import.meta.url.
 * OPKIT_FAULT_SEEDS is read by the runtime's `faultSeeds`.
 */
export function faultReplay(testFile: string, seed: number): string {
  const file = testFile.startsWith('file:') ? fileURLToPath(testFile) : testFile;
  let pkg = dirname(file);
  while (pkg !== dirname(pkg) && !existsSync(join(pkg, 'package.json'))) pkg = dirname(pkg);
  return `cd ${relative(process.cwd(), pkg) || '.'} && OPKIT_FAULT_SEEDS=${seed} npx vitest run ${relative(pkg, file)}`;
}
