import { describe, expect, it } from 'vitest';
import { parseTarget } from './publish.js';
import { parseArgs } from './release-cli.js';

describe('parseTarget: --registry host[:port]/path', () => {
  it.each([
    ['ghcr.io/acme', false, { host: 'ghcr.io', path: 'acme', plainHttp: false }],
    ['localhost:5001/opkit', true, { host: 'localhost:5001', path: 'opkit', plainHttp: true }],
    ['oci://registry.example.com/team/operators/', false, { host: 'registry.example.com', path: 'team/operators', plainHttp: false }],
  ])('%s', (prefix, plainHttp, target) => {
    expect(parseTarget(prefix, plainHttp)).toEqual(target);
  });
  it.each([
    ['ghcr.io', /give a path under the host/],
    ['', /no registry host/],
    ['ghcr.io/Acme', /not a repository path/],
    ['ghcr.io/a//b', /not a repository path/],
    ['https://ghcr.io/acme', /no registry host/],
  ])('refuses %j', (prefix, why) => {
    expect(() => parseTarget(prefix)).toThrow(why);
  });
});

describe('the release command’s arguments', () => {
  it('takes the phase, its arguments and the flags it knows, with values either way', () => {
    expect(parseArgs(['publish', '--registry', 'ghcr.io/acme', '--plain-http', '--out=dist/x'])).toEqual({
      phase: 'publish',
      positional: [],
      flags: { '--registry': 'ghcr.io/acme', '--plain-http': true, '--out': 'dist/x' },
    });
    expect(parseArgs(['version', 'minor', '--dry-run'])).toEqual({ phase: 'version', positional: ['minor'], flags: { '--dry-run': true } });
  });
  it('refuses an unknown flag and a flag without its value, saying what it wants', () => {
    expect(() => parseArgs(['publish', '--registy', 'x'])).toThrow(/unknown flag --registy \(known: --dry-run, --registry/);
    expect(() => parseArgs(['publish', '--registry'])).toThrow(/--registry needs a value: publish: host\[:port\]\/path/);
    expect(() => parseArgs(['publish', '--registry', '--plain-http'])).toThrow(/--registry needs a value/);
  });
});
