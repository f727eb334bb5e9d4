// Builds the toolset the tests run (etcd, kube-apiserver, helm, kwok…; `--group kind` adds kind and
// its node's programs) from Go modules, once per version, into opkit's cache; a no-op when built.
//   node tools/build/run-ts.mjs @opkit/testing/cli/binaries [--group kind]
import { buildToolset } from './build-toolset.js';

buildToolset(process.argv.slice(2), '  ').then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
