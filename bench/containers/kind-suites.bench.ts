// Wall time of each e2e suite in the kind mode (nx e2e, OPKIT_E2E_MODE=kind), cold and warm:
//   cold: the suite's app images removed and BuildKit's cache pruned first, so `npm ci` and the
//         bundle run again inside the build (the local bases and the node image stay built);
//   warm: run again at once.
// Each run creates its kind cluster, builds and loads its images, runs its spec, and deletes it.
import { docker } from '@opkit/testing/containers';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { table, runBench } from '../report.js';

const SUITES: [string, string[]][] = [
  ['memcached-operator-e2e', ['memcached-operator']],
  ['cdn-operator-e2e', ['cdn-operator']],
  ['cert-operator-e2e', ['cert-operator', 'acme-solver']],
];

function runSuite(suite: string): Promise<{ s: number; ok: boolean; tests: string; testS: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn('npx', ['nx', 'e2e', `@opkit/${suite}`, '--skip-nx-cache', '--outputStyle=stream'], {
      env: { ...process.env, OPKIT_E2E_MODE: 'kind', NX_DAEMON: 'false', NX_TUI: 'false' },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    child.on('exit', (code) => {
      const report = JSON.parse(readFileSync(join(process.cwd(), 'e2e', suite, 'test-output/vitest/report.json'), 'utf8')) as {
        numPassedTests: number;
        numTotalTests: number;
        testResults: { startTime: number; endTime: number }[];
      };
      const r = report.testResults[0];
      resolve({
        s: (Date.now() - t0) / 1000,
        ok: code === 0,
        tests: `${report.numPassedTests}/${report.numTotalTests}`,
        testS: r ? (r.endTime - r.startTime) / 1000 : 0,
      });
    });
  });
}

async function main() {
  const rows: Record<string, string | number>[] = [];
  for (const [suite, apps] of SUITES) {
    const images = spawnSync('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((r) => apps.some((a) => r.startsWith(`opkit/${a}:`)));
    if (images.length) await docker(['rmi', '-f', ...images], { check: false });
    await docker(['builder', 'prune', '-af'], { check: false });
    const cold = await runSuite(suite);
    const warm = await runSuite(suite);
    rows.push({
      suite,
      'cold s': cold.s,
      'warm s': warm.s,
      'vitest file s (warm, cluster included)': warm.testS,
      'passed (cold/warm)': `${cold.tests} / ${warm.tests}`,
    });
  }
  table(rows);
  console.log(
    `load average: ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runBench(main);
