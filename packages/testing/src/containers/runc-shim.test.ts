import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goTool } from './go-tools.js';
import { which } from './which.js';

// The runtime shim dockerd runs where the machine withholds capabilities: it must remove exactly
// those from the container's spec and then run the real runc with the same arguments.
describe.skipIf(!which('go'))('tools/containers/go/runc-shim', () => {
  let shim: string;
  let dir: string;
  let fakeRunc: string;
  beforeAll(async () => {
    shim = await goTool('runc-shim');
    dir = mkdtempSync(join(tmpdir(), 'opkit-shim-'));
    fakeRunc = join(dir, 'runc');
    writeFileSync(fakeRunc, `#!/bin/sh\necho "$@" > '${join(dir, 'args')}'\n`);
    chmodSync(fakeRunc, 0o755);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const caps = (set: string[]) => ({ bounding: set, effective: set, permitted: set });

  it('removes the withheld capabilities from a bundle on create, then runs runc with the same arguments', () => {
    const bundle = join(dir, 'bundle');
    spawnSync('mkdir', ['-p', bundle]);
    writeFileSync(
      join(bundle, 'config.json'),
      JSON.stringify({ ociVersion: '1.0.2', process: { args: ['sh'], capabilities: caps(['CAP_CHOWN', 'CAP_SYS_RESOURCE', 'CAP_NET_ADMIN']) } }),
    );
    const r = spawnSync(shim, [`--opkit-runc=${fakeRunc}`, '--opkit-drop-caps=CAP_SYS_RESOURCE', '--root', '/run/x', 'create', '--bundle', bundle, 'c1'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as { process: { capabilities: Record<string, string[]> } };
    expect(spec.process.capabilities).toEqual(caps(['CAP_CHOWN', 'CAP_NET_ADMIN']));
    expect(readFileSync(join(dir, 'args'), 'utf8').trim()).toBe(`--root /run/x create --bundle ${bundle} c1`);
  });

  it("removes them from an exec's process file, and leaves every other command alone", () => {
    const proc = join(dir, 'process.json');
    writeFileSync(proc, JSON.stringify({ args: ['sh'], capabilities: caps(['CAP_SYS_RESOURCE', 'CAP_KILL']) }));
    expect(spawnSync(shim, [`--opkit-runc=${fakeRunc}`, '--opkit-drop-caps=CAP_SYS_RESOURCE', 'exec', `--process=${proc}`, 'c1']).status).toBe(0);
    expect((JSON.parse(readFileSync(proc, 'utf8')) as { capabilities: object }).capabilities).toEqual(caps(['CAP_KILL']));
    expect(spawnSync(shim, [`--opkit-runc=${fakeRunc}`, '--opkit-drop-caps=CAP_SYS_RESOURCE', 'state', 'c1']).status).toBe(0);
    expect(readFileSync(join(dir, 'args'), 'utf8').trim()).toBe('state c1');
  });
});
