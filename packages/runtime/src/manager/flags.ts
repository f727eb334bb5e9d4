import { parseArgs } from 'node:util';
import { parseDuration } from '../helpers/duration.js';
import { commaList } from './environment.js';

/**
 * One typed definition per flag gives its parsing, its validation (a bad value stops the start with
 * the flag's name), its default and its help line. Definitions are keyed by the property the value
 * lands in; the flag's name is that key in kebab case (`maxConcurrentChallenges` is
 * `--max-concurrent-challenges`).
 */
export interface Flag<T> {
  readonly type: 'string' | 'boolean';
  /** Shown after the flag name in help, e.g. `<n>`; none for booleans. */
  readonly metavar?: string;
  readonly help: string;
  readonly default?: T;
  /** Turns the raw text into the value, or throws a message saying what is expected. */
  parse(raw: string | boolean): T;
  /** How the default is shown in help (if it is not just the value). */
  readonly defaultText?: string;
  /** A one-letter alias (`-n` for `--namespace`), as command-line tools have. */
  readonly short?: string;
}

type Common<T> = { help: string; default?: T; defaultText?: string; metavar?: string; short?: string };

export const flag = {
  string: (o: Common<string>): Flag<string> => ({ type: 'string', metavar: o.metavar ?? '<value>', ...o, parse: (raw) => String(raw) }),
  /** A string that may be absent (no default). */
  optionalString: (o: Omit<Common<string>, 'default'>): Flag<string | undefined> => ({
    type: 'string',
    metavar: o.metavar ?? '<value>',
    ...o,
    parse: (raw) => String(raw),
  }),
  boolean: (o: Omit<Common<boolean>, 'metavar'>): Flag<boolean> => ({ type: 'boolean', default: false, ...o, parse: (raw) => raw === true }),
  int: (o: Common<number> & { min?: number; max?: number }): Flag<number> => ({
    type: 'string',
    metavar: o.metavar ?? '<n>',
    ...o,
    parse: (raw) => {
      const text = String(raw);
      if (!/^-?\d+$/.test(text)) throw new Error(`a whole number, not "${text}"`);
      const n = Number(text);
      if (o.min !== undefined && n < o.min) throw new Error(`at least ${o.min}, not ${n}`);
      if (o.max !== undefined && n > o.max) throw new Error(`at most ${o.max}, not ${n}`);
      return n;
    },
  }),
  /** A duration in milliseconds, written as 30s, 10m, 1h30m. */
  duration: (o: Common<number>): Flag<number> => ({
    type: 'string',
    metavar: o.metavar ?? '<duration>',
    ...o,
    parse: (raw) => {
      try {
        return parseDuration(String(raw));
      } catch {
        throw new Error(`a duration such as 30s, 10m or 1h30m, not "${String(raw)}"`);
      }
    },
  }),
  oneOf: <const C extends string>(choices: readonly C[], o: Common<NoInfer<C>>): Flag<C> => ({
    type: 'string',
    metavar: o.metavar ?? `<${choices.join('|')}>`,
    ...o,
    parse: (raw) => {
      if (!choices.includes(raw as C)) throw new Error(`one of ${choices.join(', ')}, not "${String(raw)}"`);
      return raw as C;
    },
  }),
  /** A comma-separated list; empty items dropped. */
  list: (o: Common<string[]>): Flag<string[]> => ({
    type: 'string',
    metavar: o.metavar ?? '<a,b,...>',
    default: [],
    ...o,
    parse: (raw) => commaList(String(raw)),
  }),
};

export type FlagDefinitions = Record<string, Flag<unknown>>;
export type FlagValues<D extends FlagDefinitions> = { [K in keyof D]: D[K] extends Flag<infer T> ? T : never };

export class FlagError extends Error {
  override name = 'FlagError';
}

export const flagName = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Help lines for a set of definitions: name and metavar, help text, default. */
export function flagHelp(defs: FlagDefinitions): string {
  const rows = Object.entries(defs).map(([key, f]) => {
    const left = `${f.short ? `-${f.short}, ` : ''}--${flagName(key)}${f.type === 'boolean' ? '' : ` ${f.metavar}`}`;
    const shown =
      f.defaultText ?? (f.type === 'boolean' || f.default === undefined || (Array.isArray(f.default) && !f.default.length) ? undefined : String(f.default));
    return [left, `${f.help}${shown ? ` (default ${shown})` : ''}`] as const;
  });
  const width = Math.max(...rows.map(([l]) => l.length)) + 3;
  return rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`).join('\n');
}

/**
 * Parses argv against the definitions. Unknown flags, missing values and invalid values are a
 * FlagError naming the flag. `--help` is reported, not handled. Arguments that are not flags are
 * an error, unless `positionals` allows them (a command-line tool's subcommands and names).
 */
export function parseFlags<D extends FlagDefinitions>(
  defs: D,
  argv: string[],
  opts: { positionals?: boolean } = {},
): { values: FlagValues<D>; help: boolean; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const [key, f] of Object.entries(defs)) options[flagName(key)] = { type: f.type, ...(f.short ? { short: f.short } : {}) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: !!opts.positionals, strict: true });
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const raw = parsed.values as Record<string, string | boolean | undefined>;
  const values: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(defs)) {
    const given = raw[flagName(key)];
    if (given === undefined) {
      values[key] = f.default;
      continue;
    }
    try {
      values[key] = f.parse(given);
    } catch (err) {
      throw new FlagError(`--${flagName(key)}: expected ${(err as Error).message}`);
    }
  }
  return { values: values as FlagValues<D>, help: raw.help === true, positionals: parsed.positionals };
}

/** The flags every kubebuilder/controller-runtime operator accepts, with the same names. */
export const MANAGER_FLAGS = {
  metricsBindAddress: flag.string({ metavar: '<addr>', default: ':8080', help: 'where /metrics is served (0 disables)' }),
  metricsSecure: flag.boolean({
    help: 'serve /metrics and /debug/queue over HTTPS to callers the API server authenticates (TokenReview) and authorizes (SubjectAccessReview, GET on the path); the charts turn it on',
  }),
  insecureDebugQueue: flag.boolean({
    help: 'without --metrics-secure, serve /debug/queue anyway, to anyone who reaches the metrics port (it names objects and quotes their errors)',
  }),
  healthProbeBindAddress: flag.string({ metavar: '<addr>', default: ':8081', help: 'where /healthz and /readyz are served (0 disables)' }),
  leaderElect: flag.boolean({ help: 'run leader election so only one replica reconciles' }),
  leaderElectionNamespace: flag.optionalString({ metavar: '<ns>', help: "the Lease's namespace", defaultText: "POD_NAMESPACE or the kubeconfig's" }),
  leaderElectionId: flag.optionalString({ metavar: '<name>', help: "the Lease's name", defaultText: '<operator>-leader' }),
  shard: flag.boolean({
    help: 'run on every replica, each reconciling its part of the objects (a shard ring kept in Leases; docs/runtime.md "Sharding"), instead of --leader-elect',
  }),
  shardNamespace: flag.optionalString({ metavar: '<ns>', help: "where the ring's Leases live", defaultText: "POD_NAMESPACE or the kubeconfig's" }),
  shardRing: flag.optionalString({
    metavar: '<name>',
    help: "the ring's name: its Leases are <ring>-coordinator, <ring>-shards, <ring>-member-*",
    defaultText: '<operator>',
  }),
  webhookBindAddress: flag.string({
    metavar: '<addr>',
    default: ':9443',
    help: 'where admission and conversion webhooks are served, over TLS (0 disables; only operators with webhooks listen)',
  }),
  webhookSecretName: flag.optionalString({
    metavar: '<name>',
    help: 'the Secret, in POD_NAMESPACE, that keeps the webhook CA and serving certificate',
    defaultText: '<operator>-webhook-tls',
  }),
  webhookHost: flag.list({
    metavar: '<a,b,...>',
    help: 'DNS names or IPs the API server calls the webhooks by',
    defaultText: '<operator>-webhook.<namespace>.svc',
  }),
  webhookCertDir: flag.optionalString({
    metavar: '<dir>',
    help: "serve tls.crt and tls.key from this directory, kept by someone else (OLM, a mounted Secret), instead of the runtime's own certificates",
    defaultText: 'the runtime keeps its own',
  }),
  webhookConfigurationName: flag.optionalString({
    metavar: '<name>',
    help: 'the Mutating/ValidatingWebhookConfiguration that gets the CA injected',
    defaultText: '<operator>',
  }),
  otelExporterOtlpEndpoint: flag.optionalString({
    metavar: '<url>',
    help: 'send a trace span per reconcile (and per API call it makes) to this OpenTelemetry collector, over OTLP/HTTP',
    defaultText: 'OTEL_EXPORTER_OTLP_ENDPOINT; unset: off',
  }),
  idleHeapCompaction: flag.duration({
    default: 10_000,
    defaultText: '10s',
    help: 'after a burst of work grew the heap, give the memory it left behind back to the system once every controller has been idle this long: one compacting collection, a pause of about 4 ms per MiB live (0s: never)',
  }),
  kubeconfig: flag.optionalString({ metavar: '<path>', help: 'kubeconfig to use', defaultText: 'KUBECONFIG, in-cluster, ~/.kube/config' }),
  logLevel: flag.oneOf(['trace', 'debug', 'info', 'warn', 'error'] as const, { default: 'info', help: 'log level' }),
  logFormat: flag.oneOf(['json', 'pretty'] as const, { default: 'json', help: 'json lines or human-readable' }),
  logTimeEncoding: flag.oneOf(['epoch', 'iso8601'] as const, { default: 'epoch', help: "json lines' time: epoch milliseconds (pino's) or ISO 8601" }),
  logLevelEncoding: flag.oneOf(['number', 'string'] as const, { default: 'number', help: "json lines' level: pino's number or its name" }),
} satisfies FlagDefinitions;

export type ManagerFlags = FlagValues<typeof MANAGER_FLAGS>;
