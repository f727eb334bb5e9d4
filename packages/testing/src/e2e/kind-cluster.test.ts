import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kindUnavailable } from './kind-cluster.js';
import { e2eModes } from './operator.js';

// The kind mode cannot run on a machine without Docker; what it can do here is decide, and say why.
// Stand-in `docker` and `kind` scripts on a private PATH give it each situation to decide on.
describe('choosing the kind mode', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const path = (tools: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-path-'));
    dirs.push(dir);
    for (const [name, script] of Object.entries(tools)) {
      writeFileSync(join(dir, name), `#!/bin/sh\n${script}\n`);
      chmodSync(join(dir, name), 0o755);
    }
    vi.stubEnv('PATH', dir);
    return dir;
  };

  it('names what is missing: docker, kind, or a reachable Docker engine', () => {
    path({});
    expect(kindUnavailable()).toBe('`docker` is not on PATH');
    path({ docker: 'exit 0' });
    expect(kindUnavailable()).toBe('`kind` is not on PATH');
    path({ docker: '[ "$1" = info ] && { echo "Cannot connect to the Docker daemon" >&2; exit 1; }; exit 0', kind: 'exit 0' });
    expect(kindUnavailable()).toBe('no Docker engine is reachable (`docker info` failed)');
    path({ docker: 'exit 0', kind: 'exit 0' });
    expect(kindUnavailable()).toBeUndefined();
  });

  it('runs both modes by default, skipping kind with its reason; OPKIT_E2E_MODE picks one', () => {
    path({ docker: 'exit 0' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    vi.stubEnv('OPKIT_E2E_MODE', '');
    delete process.env.OPKIT_E2E_MODE;
    expect(e2eModes()).toEqual([{ name: 'local' }, { name: 'kind', skip: '`kind` is not on PATH; install Docker and kind to run it' }]);
    expect(warn.mock.calls.flat().join('\n')).toMatch(/kind mode skipped: `kind` is not on PATH/);
    vi.stubEnv('OPKIT_E2E_MODE', 'local');
    expect(e2eModes()).toEqual([{ name: 'local' }]);
    path({ docker: 'exit 0', kind: 'exit 0' });
    vi.stubEnv('OPKIT_E2E_MODE', 'kind');
    expect(e2eModes()).toEqual([{ name: 'kind', skip: undefined }]);
  });
});
