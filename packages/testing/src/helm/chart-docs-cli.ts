// nx run @opkit/<operator>:chart-docs — regenerates charts/<chart>/README.md with helm-docs.
//   node tools/build/run-ts.mjs packages/testing/src/helm/chart-docs-cli.ts charts/<chart> [--check]
import { syncChartReadme } from './chart-docs.js';

const [chart, flag] = process.argv.slice(2);
if (!chart) {
  console.error('usage: chart-docs-cli.ts charts/<chart> [--check]');
  process.exit(2);
}
void syncChartReadme(chart, flag === '--check' ? 'check' : 'write').then((fresh) => {
  console.log(
    fresh ? `${chart}/README.md is up to date` : flag === '--check' ? `${chart}/README.md is stale: run the chart-docs target` : `${chart}/README.md written`,
  );
  process.exit(fresh || flag !== '--check' ? 0 : 1);
});
