import { describe, expect, it } from 'vitest';
import { parseManagerFlags, watchNamespaces } from './flags.js';
import { parseBindAddress } from './http-server.js';
import { microTime } from './leader-election.js';

describe('manager flags', () => {
  it('has controller-runtime defaults', () => {
    expect(parseManagerFlags([]).flags).toEqual({ metricsBindAddress: ':8080', healthProbeBindAddress: ':8081', leaderElect: false, logLevel: 'info', logFormat: 'json' });
  });
  it('parses the standard flags', () => {
    const { flags } = parseManagerFlags(['--leader-elect', '--metrics-bind-address=127.0.0.1:9090', '--kubeconfig', '/k', '--log-level=debug', '--log-format=pretty']);
    expect(flags).toMatchObject({ leaderElect: true, metricsBindAddress: '127.0.0.1:9090', kubeconfig: '/k', logLevel: 'debug', logFormat: 'pretty' });
  });
  it('names an unknown flag or a bad value', () => {
    expect(() => parseManagerFlags(['--leader-elected'])).toThrow(/leader-elected/);
    expect(() => parseManagerFlags(['--log-format=xml'])).toThrow(/json or pretty/);
  });
  it('reads WATCH_NAMESPACE as a comma-separated list, empty meaning all', () => {
    expect(watchNamespaces({ WATCH_NAMESPACE: 'a, b,,c' })).toEqual(['a', 'b', 'c']);
    expect(watchNamespaces({})).toEqual([]);
  });
  it('parses bind addresses; 0 disables', () => {
    expect(parseBindAddress(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseBindAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseBindAddress('0')).toBeUndefined();
    expect(() => parseBindAddress(':http')).toThrow(/invalid bind address/);
  });
  it('formats Lease MicroTime with six fractional digits', () => {
    expect(microTime(new Date('2026-11-21T05:14:42.123Z'))).toBe('2026-11-21T05:14:42.123000Z');
  });
});
