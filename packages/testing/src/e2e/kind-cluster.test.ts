import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kindUnavailable } from './kind-cluster.js';
import { e2eModes } from './operator.js';

// Where the kind mode cannot run it says why. Stand-in commands give it each situation to decide on.
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

  it('names what stops it: no engine and none to install, or no kind and no Go to build it', () => {
    const empty = mkdtempSync(join(tmpdir(), 'opkit-cache-'));
    dirs.push(empty);
    vi.stubEnv('OPKIT_CACHE_DIR', empty); // no kind built into the cache
    const asRoot = process.getuid?.() === 0;
    path({});
    expect(kindUnavailable()).toBe(
      asRoot
        ? 'no Docker engine answers, and this is not a Debian-like system (no apt-get) to install docker.io from'
        : "no Docker engine answers, and installing Debian's docker.io needs root",
    );
    if (asRoot) {
      // Root on Debian: the engine can be installed, but kind can be neither found nor built.
      path({ 'apt-get': 'exit 0' });
      expect(kindUnavailable()).toBe('`kind` is not on PATH, and Go (to build it) is not installed');
      path({ 'apt-get': 'exit 0', go: 'exit 0' });
      expect(kindUnavailable()).toBeUndefined();
    }
    path({ docker: '[ "$1" = info ] && echo 28.2.2; exit 0', kind: 'exit 0' });
    expect(kindUnavailable()).toBeUndefined();
    vi.stubEnv('OPKIT_CONTAINER_ENGINE', 'none');
    expect(kindUnavailable()).toBe('OPKIT_CONTAINER_ENGINE=none');
  });

  it('runs both modes by default, skipping kind with its reason; OPKIT_E2E_MODE picks one', () => {
    vi.stubEnv('OPKIT_CONTAINER_ENGINE', 'none');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    vi.stubEnv('OPKIT_E2E_MODE', '');
    delete process.env.OPKIT_E2E_MODE;
    expect(e2eModes()).toEqual([{ name: 'local' }, { name: 'kind', skip: 'OPKIT_CONTAINER_ENGINE=none' }]);
    expect(warn.mock.calls.flat().join('\n')).toMatch(/kind mode skipped: OPKIT_CONTAINER_ENGINE=none/);
    vi.stubEnv('OPKIT_E2E_MODE', 'local');
    expect(e2eModes()).toEqual([{ name: 'local' }]);
    vi.stubEnv('OPKIT_CONTAINER_ENGINE', '');
    path({ docker: '[ "$1" = info ] && echo 28.2.2; exit 0', kind: 'exit 0' });
    vi.stubEnv('OPKIT_E2E_MODE', 'kind');
    expect(e2eModes()).toEqual([{ name: 'kind', skip: undefined }]);
  });
});
