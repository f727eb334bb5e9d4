import { describe, expect, it } from 'vitest';
import { containerArgv, dockerfileImageConfig, hostLibrary, localEnv, localProcess } from './image-command.js';

describe('containerArgv: what a container runs, by the Kubernetes rule', () => {
  const image = { entrypoint: ['/nodejs/bin/node', '/app/main.js'], cmd: ['--help'] };
  it.each([
    ['no command, no args: ENTRYPOINT + CMD', {}, ['/nodejs/bin/node', '/app/main.js', '--help']],
    ['args replace CMD only', { args: ['--leader-elect'] }, ['/nodejs/bin/node', '/app/main.js', '--leader-elect']],
    ['command replaces ENTRYPOINT and drops CMD', { command: ['/bin/true'] }, ['/bin/true']],
    ['command and args', { command: ['/bin/echo'], args: ['x'] }, ['/bin/echo', 'x']],
  ])('%s', (_n, container, want) => {
    expect(containerArgv(container, image)).toEqual(want);
  });
});

describe('dockerfileImageConfig', () => {
  it('inherits the distroless Node ENTRYPOINT when the Dockerfile sets only CMD', () => {
    const c = dockerfileImageConfig(
      'FROM node AS build\nRUN x\nFROM gcr.io/distroless/nodejs24-debian13:nonroot\nWORKDIR /app\nENV A=1 \\\n    B="two"\nCMD ["main.js"]\n',
    );
    expect(c).toEqual({ entrypoint: ['/nodejs/bin/node'], cmd: ['main.js'], workdir: '/app', env: { A: '1', B: 'two' } });
  });
  it('reads an ENTRYPOINT of its own and a CMD set after it', () => {
    const c = dockerfileImageConfig('FROM ${NODE_RUNTIME_IMAGE}\nENTRYPOINT ["/nodejs/bin/node", "/app/main.js"]\nCMD []\n');
    expect(c).toMatchObject({ entrypoint: ['/nodejs/bin/node', '/app/main.js'], cmd: [] });
  });
});

describe('localProcess', () => {
  const image = {
    entrypoint: ['/nodejs/bin/node'],
    cmd: ['main.js'],
    workdir: '/app',
    env: {},
    files: { '/nodejs/bin/node': '/usr/bin/node', '/app/main.js': '/repo/dist/main.js' },
  };
  it("maps the image's files to this machine, relative paths against WORKDIR", () => {
    expect(localProcess(containerArgv({}, image), image)).toEqual({ file: '/usr/bin/node', args: ['/repo/dist/main.js'] });
  });
  // The crash loop of every operator in a real cluster: the chart's args replaced CMD ["main.js"],
  // so node itself got the operator's flags. Run locally, it fails the same way.
  it('passes flags through unchanged, so node receives them as a container would', () => {
    expect(localProcess(containerArgv({ args: ['--metrics-bind-address=:8080'] }, image), image)).toEqual({
      file: '/usr/bin/node',
      args: ['--metrics-bind-address=:8080'],
    });
  });
  it('refuses a command it has no file for', () => {
    expect(() => localProcess(['/bin/sh', '-c', 'x'], image)).toThrow(/cannot run \/bin\/sh locally/);
  });
});

describe("localEnv: the image's environment for a local process", () => {
  const here = (name: string) => (name === 'libjemalloc.so.2' ? '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' : undefined);
  it("preloads this machine's copy of a library the image preloads", () => {
    expect(localEnv({ LD_PRELOAD: '/usr/lib/opkit/libjemalloc.so.2', A: '1' }, here)).toEqual({
      LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
      A: '1',
    });
  });
  // Passed on, a missing library makes ld.so print an error at every start of every process.
  it('leaves out a library this machine lacks, and LD_PRELOAD with it when none is left', () => {
    expect(localEnv({ LD_PRELOAD: '/usr/lib/opkit/libother.so.1', A: '1' }, here)).toEqual({ A: '1' });
    expect(localEnv({ LD_PRELOAD: '/x/libother.so.1:/usr/lib/opkit/libjemalloc.so.2' }, here)).toEqual({
      LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
    });
  });
  it('leaves an environment without LD_PRELOAD as it is', () => {
    expect(localEnv({ A: '1' }, here)).toEqual({ A: '1' });
  });
  it('finds a library by name in the directories given, in order', async () => {
    const { mkdtempSync, writeFileSync, mkdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const root = mkdtempSync(join(tmpdir(), 'libs-'));
    for (const d of ['a', 'b']) mkdirSync(join(root, d));
    writeFileSync(join(root, 'b', 'libx.so.1'), '');
    expect(hostLibrary('libx.so.1', [join(root, 'a'), join(root, 'b')])).toBe(join(root, 'b', 'libx.so.1'));
    expect(hostLibrary('liby.so.1', [join(root, 'a'), join(root, 'b')])).toBeUndefined();
  });
});

describe('apps/Dockerfile', () => {
  // The deps stage copies each workspace's package.json before `npm ci`; one missing there is a
  // workspace npm cannot link, and a lockfile the image does not install as written.
  it('copies the package.json of every npm workspace, and nothing else', async () => {
    const { readFileSync, readdirSync, existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = join(import.meta.dirname, '../../../..');
    const patterns = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
    const workspaces = patterns.flatMap((p) => {
      const dir = p.replace(/\/\*$/, '');
      return readdirSync(join(root, dir))
        .map((d) => `${dir}/${d}`)
        .filter((w) => existsSync(join(root, w, 'package.json')));
    });
    const copied = [...readFileSync(join(root, 'apps/Dockerfile'), 'utf8').matchAll(/^COPY (\S+)\/package\.json \1\/$/gm)].map((m) => m[1]);
    expect(copied.sort()).toEqual(workspaces.sort());
  });
});
