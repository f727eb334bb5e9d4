import { describe, expect, it } from 'vitest';
import { containerArgv, dockerfileImageConfig, localProcess } from './image-command.js';

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
