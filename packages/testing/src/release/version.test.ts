import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { workspaceRoot } from '../e2e/workspace.js';
import { changelogSection, prependChangelog, setChartVersion } from './version.js';

const root = workspaceRoot(import.meta.dirname);

describe('setChartVersion', () => {
  it.each(['memcached-operator', 'cdn-operator', 'cert-operator'])('%s: version and appVersion set, every other line kept', (chart) => {
    const before = readFileSync(join(root, 'charts', chart, 'Chart.yaml'), 'utf8');
    const after = setChartVersion(before, '1.2.3-rc.1');
    expect(parse(after)).toEqual({ ...parse(before), version: '1.2.3-rc.1', appVersion: '1.2.3-rc.1' });
    expect(after.split('\n').filter((l) => !/^(version|appVersion):/.test(l))).toEqual(before.split('\n').filter((l) => !/^(version|appVersion):/.test(l)));
  });
  it("leaves a dependency's version alone (it is indented)", () => {
    const yaml = 'version: 0.1.0\nappVersion: "0.1.0"\ndependencies:\n  - name: opkit-lib\n    version: 1.0.0\n';
    expect(setChartVersion(yaml, '0.2.0')).toBe('version: 0.2.0\nappVersion: "0.2.0"\ndependencies:\n  - name: opkit-lib\n    version: 1.0.0\n');
  });
  it('refuses a Chart.yaml without both lines, rather than publish a chart versioned wrong', () => {
    expect(() => setChartVersion('name: x\nversion: 0.1.0\n', '0.2.0')).toThrow(/found 1/);
  });
});

describe('changelogSection: commits grouped by the area their subject names', () => {
  const commits = [
    { hash: 'c'.repeat(40), subject: 'runtime: the queue keeps its order' },
    { hash: 'b'.repeat(40), subject: 'cert: Retry-After obeyed' },
    { hash: 'a'.repeat(40), subject: 'runtime: a clock injected' },
    { hash: 'd'.repeat(40), subject: 'Merge something without an area' },
    { hash: 'e'.repeat(40), subject: 'acme DNS-01 with RFC 2136: a sentence, not an area' },
  ];
  it('areas alphabetically, each oldest first, with short hashes; subjects without an area under other', () => {
    expect(changelogSection('0.2.0', '2026-11-26', commits)).toBe(
      [
        '## 0.2.0 (2026-11-26)',
        '',
        '### cert',
        '',
        '- Retry-After obeyed (bbbbbbb)',
        '',
        '### other',
        '',
        '- acme DNS-01 with RFC 2136: a sentence, not an area (eeeeeee)',
        '- Merge something without an area (ddddddd)',
        '',
        '### runtime',
        '',
        '- a clock injected (aaaaaaa)',
        '- the queue keeps its order (ccccccc)',
        '',
      ].join('\n'),
    );
  });
  it('says so when there is nothing', () => {
    expect(changelogSection('0.2.1', '2026-11-27', [])).toBe('## 0.2.1 (2026-11-27)\n\nNo changes.\n');
  });
});

describe('prependChangelog', () => {
  const first = changelogSection('0.2.0', '2026-11-26', [{ hash: 'a'.repeat(40), subject: 'cert: one' }]);
  const second = changelogSection('0.3.0', '2026-12-01', [{ hash: 'b'.repeat(40), subject: 'cert: two' }]);
  it('starts a changelog with its title, then puts each release above the one before', () => {
    const one = prependChangelog('', first);
    expect(one.startsWith('# Changelog\n')).toBe(true);
    const two = prependChangelog(one, second);
    expect(two.indexOf('## 0.3.0')).toBeLessThan(two.indexOf('## 0.2.0'));
    expect(two.match(/^# Changelog$/gm)).toHaveLength(1);
    expect(two).toContain('- one (aaaaaaa)');
    expect(two.endsWith('\n')).toBe(true);
  });
});
