import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versions } from '../assets/binaries.js';
import { run } from '../run.js';

const dirs = new Map<string, Promise<string>>();

/**
 * A Go module's files, from the Go module proxy at the pinned version (cached in Go's module
 * cache): projects publish their generated CRDs in their modules, so tests install the real ones,
 * downloaded from no release page.
 */
function moduleDir(module: string, version: string): Promise<string> {
  const id = `${module}@${version}`;
  let dir = dirs.get(id);
  if (!dir) {
    dir = run('go', ['mod', 'download', '-json', id], { cwd: tmpdir(), env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' } }).then(
      (r) => (JSON.parse(r.stdout) as { Dir: string }).Dir,
    );
    dirs.set(id, dir);
  }
  return dir;
}

/** The Prometheus operator's CRDs (ServiceMonitor, PrometheusRule): charts that render them are dry-run, not only templated. */
export async function prometheusOperatorCrds(kinds: string[] = ['servicemonitors', 'prometheusrules']): Promise<string[]> {
  const root = join(await moduleDir('github.com/prometheus-operator/prometheus-operator', versions.prometheusOperator), 'example/prometheus-operator-crd');
  return kinds.map((k) => readFileSync(join(root, `monitoring.coreos.com_${k}.yaml`), 'utf8'));
}

/** The Gateway API's standard CRDs (GatewayClass, Gateway, HTTPRoute…), as the project publishes them. */
export async function gatewayApiCrds(kinds: string[] = ['gatewayclasses', 'gateways', 'httproutes']): Promise<string[]> {
  const root = join(await moduleDir('sigs.k8s.io/gateway-api', versions.gatewayApi), 'config/crd/standard');
  return kinds.map((k) => readFileSync(join(root, `gateway.networking.k8s.io_${k}.yaml`), 'utf8'));
}
