import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versions } from '../assets/binaries.js';
import { run } from '../run.js';

let dir: Promise<string> | undefined;

/**
 * The Prometheus operator's CRDs (ServiceMonitor, PrometheusRule), as its own repository
 * publishes them, at the pinned version: from the Go module proxy (the module's files carry the
 * generated CRDs), cached in Go's module cache. Charts that render these kinds are dry-run against
 * a server that knows them, not merely templated.
 */
export async function prometheusOperatorCrds(kinds: string[] = ['servicemonitors', 'prometheusrules']): Promise<string[]> {
  dir ??= run('go', ['mod', 'download', '-json', `github.com/prometheus-operator/prometheus-operator@${versions.prometheusOperator}`], {
    cwd: tmpdir(),
    env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
  }).then((r) => (JSON.parse(r.stdout) as { Dir: string }).Dir);
  const root = join(await dir, 'example/prometheus-operator-crd');
  return kinds.map((k) => readFileSync(join(root, `monitoring.coreos.com_${k}.yaml`), 'utf8'));
}
