// `nx run @opkit/memcached-operator:generate`: writes the generated chart files; `--check` lists
// stale ones and exits 1.
import { generatedFilesCommand } from '@opkit/runtime';
import { generatedFiles, GENERATOR } from './generate.js';

generatedFilesCommand(generatedFiles(process.cwd()), GENERATOR);
