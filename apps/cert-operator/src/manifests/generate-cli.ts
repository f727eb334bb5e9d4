// `nx run @opkit/cert-operator:generate`: writes the generated chart files; `--check` lists
// stale ones and exits 1.
import { syncGeneratedFiles } from '@opkit/runtime';
import { generatedFiles, GENERATOR } from './generate.js';

const check = process.argv.includes('--check');
const stale = syncGeneratedFiles(generatedFiles(process.cwd()), check ? 'check' : 'write');
if (check && stale.length) {
  console.error(`stale generated files (run: ${GENERATOR}):\n  ${stale.join('\n  ')}`);
  process.exit(1);
}
console.log(stale.length ? `${check ? 'stale' : 'wrote'}:\n  ${stale.join('\n  ')}` : 'generated files are up to date');
