// nx run @opkit/nx-plugin:build — the plugin as it is published (./dist.ts).
//   node tools/build/run-ts.mjs packages/nx-plugin/src/build/dist-cli.ts   (from the workspace's root)
import { buildPluginDist } from './dist.js';

buildPluginDist(process.cwd()).then(
  () => console.log('packages/nx-plugin/dist written'),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
