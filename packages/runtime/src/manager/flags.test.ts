import { describe, expect, it } from 'vitest';
import { operatorEnvironment } from './environment.js';
import { parseDuration } from '../helpers/duration.js';
import { flag, FlagError, flagHelp, MANAGER_FLAGS, parseFlags } from './flags.js';
import { parseBindAddress } from './http-server.js';
import { microTime } from './leader-election.js';
import { operatorUsage, parseOperatorFlags } from './run-operator.js';

describe('flags', () => {
  it('has controller-runtime defaults', () => {
    expect(parseFlags(MANAGER_FLAGS, []).values).toEqual({
      metricsBindAddress: ':8080',
      metricsSecure: false,
      insecureDebugQueue: false,
      healthProbeBindAddress: ':8081',
      leaderElect: false,
      leaderElectionNamespace: undefined,
      leaderElectionId: undefined,
      shard: false,
      shardNamespace: undefined,
      shardRing: undefined,
      webhookBindAddress: ':9443',
      webhookSecretName: undefined,
      webhookHost: [],
      webhookCertDir: undefined,
      webhookConfigurationName: undefined,
      otelExporterOtlpEndpoint: undefined,
      idleHeapCompaction: 10_000,
      kubeconfig: undefined,
      logLevel: 'info',
      logFormat: 'json',
      logTimeEncoding: 'epoch',
      logLevelEncoding: 'number',
    });
  });

  it('parses the standard flags', () => {
    const { values } = parseFlags(MANAGER_FLAGS, [
      '--leader-elect',
      '--metrics-bind-address=127.0.0.1:9090',
      '--kubeconfig',
      '/k',
      '--log-level=debug',
      '--log-format=pretty',
    ]);
    expect(values).toMatchObject({ leaderElect: true, metricsBindAddress: '127.0.0.1:9090', kubeconfig: '/k', logLevel: 'debug', logFormat: 'pretty' });
  });

  it.each([
    [['--leader-elected'], /leader-elected/],
    [['--log-format=xml'], /--log-format: expected one of json, pretty, not "xml"/],
    [['--max-concurrent-challenges=abc'], /--max-concurrent-challenges: expected a whole number, not "abc"/],
    [['--max-concurrent-challenges=0'], /--max-concurrent-challenges: expected at least 1, not 0/],
    [['--self-check-timeout=10'], /--self-check-timeout: expected a duration such as 30s, 10m or 1h30m, not "10"/],
    [['--max-concurrent-challenges'], /argument missing/],
  ])('stops at a bad flag or value, naming it: %s', (argv, message) => {
    const own = {
      maxConcurrentChallenges: flag.int({ min: 1, default: 60, help: 'at most' }),
      selfCheckTimeout: flag.duration({ default: 600_000, help: 'bound' }),
    };
    expect(() => parseOperatorFlags({ flags: own }, argv as string[])).toThrow(message);
  });

  it("gives typed values for an operator's own flags, defaults included", () => {
    const own = {
      maxConcurrentChallenges: flag.int({ min: 1, default: 60, help: '' }),
      nameservers: flag.list({ help: '' }),
      timeout: flag.duration({ default: 1_000, help: '' }),
    };
    const { values } = parseOperatorFlags({ flags: own }, ['--nameservers=10.0.0.10:53, 1.1.1.1:53', '--timeout=1m30s', '--leader-elect']);
    expect(values).toMatchObject({ maxConcurrentChallenges: 60, nameservers: ['10.0.0.10:53', '1.1.1.1:53'], timeout: 90_000, leaderElect: true });
  });

  it('writes help from the same definitions', () => {
    const help = operatorUsage({
      name: 'op',
      description: 'does things',
      flags: { maxConcurrentChallenges: flag.int({ min: 1, default: 60, help: 'challenges at once' }) },
    });
    expect(help).toMatch(/--max-concurrent-challenges <n>\s+challenges at once \(default 60\)/);
    expect(help).toMatch(/--leader-election-namespace <ns>\s+the Lease's namespace \(default POD_NAMESPACE or the kubeconfig's\)/);
    expect(help).toContain('WATCH_NAMESPACE');
    expect(flagHelp({ leaderElect: MANAGER_FLAGS.leaderElect })).toBe('  --leader-elect   run leader election so only one replica reconciles');
  });

  it('parses durations', () => {
    expect([parseDuration('500ms'), parseDuration('30s'), parseDuration('1h30m')]).toEqual([500, 30_000, 5_400_000]);
  });

  it('reads the environment in one place: WATCH_NAMESPACE as a comma-separated list, empty meaning all', () => {
    expect(operatorEnvironment({ WATCH_NAMESPACE: 'a, b,,c', POD_NAME: 'p', POD_UID: 'u', POD_NAMESPACE: 'ns' })).toEqual({
      watchNamespaces: ['a', 'b', 'c'],
      podName: 'p',
      podUid: 'u',
      podNamespace: 'ns',
    });
    expect(operatorEnvironment({}).watchNamespaces).toEqual([]);
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

  it('takes short aliases and, for command-line tools, positional arguments', () => {
    const defs = { namespace: flag.optionalString({ short: 'n', help: 'namespace' }), allNamespaces: flag.boolean({ short: 'A', help: 'all namespaces' }) };
    expect(parseFlags(defs, ['status', '-n', 'shop', 'web', '-A'], { positionals: true })).toEqual({
      values: { namespace: 'shop', allNamespaces: true },
      help: false,
      positionals: ['status', 'web'],
    });
    expect(() => parseFlags(defs, ['status'])).toThrow(FlagError);
    expect(flagHelp(defs)).toMatch(/-n, --namespace <value> +namespace/);
  });
});
