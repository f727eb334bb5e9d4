import { ENVIRONMENT_HELP } from './environment.js';
import { flagHelp, FlagError, MANAGER_FLAGS, parseFlags, type FlagDefinitions, type FlagValues } from './flags.js';
import { Manager } from './manager.js';

export interface OperatorDefinition<D extends FlagDefinitions> {
  /** The operator's name (field manager, lease, events, logs). */
  name: string;
  /** One line for --help. */
  description: string;
  /** The operator's own flags, beside the standard ones: one typed definition each (see `flag`). */
  flags?: D;
  /**
   * What `--shard` may do with this operator. `selectOnServer`: its reconcilers read no primary
   * object but the one they reconcile, so a sharded replica may cache only its share of them
   * (where the API server applies shard selectors). Leave it unset when a reconcile reads other
   * objects of its own kind (the CDN operator reads a cluster's sources).
   */
  sharding?: { selectOnServer?: boolean };
  /** Adds controllers to the manager; receives the operator's flag values, parsed and validated. */
  setup(manager: Manager, values: FlagValues<D>): void | Promise<void>;
}

/** The --help text: the standard flags, the operator's own, the environment. */
export function operatorUsage(def: Pick<OperatorDefinition<FlagDefinitions>, 'name' | 'description' | 'flags'>): string {
  const own = def.flags && Object.keys(def.flags).length ? `\n\nFlags of ${def.name}:\n${flagHelp(def.flags)}` : '';
  return `${def.name}: ${def.description}\n\nFlags:\n${flagHelp(MANAGER_FLAGS)}${own}\n\n${ENVIRONMENT_HELP}`;
}

/**
 * Parses the standard flags and the operator's own in one pass. A flag both define is a bug of the
 * operator, reported at once.
 */
export function parseOperatorFlags<D extends FlagDefinitions>(def: Pick<OperatorDefinition<D>, 'flags'>, argv: string[]) {
  const own = (def.flags ?? {}) as D;
  const clash = Object.keys(own).filter((k) => k in MANAGER_FLAGS);
  if (clash.length) throw new Error(`operator flags redefine standard ones: ${clash.join(', ')}`);
  const { values, help } = parseFlags({ ...MANAGER_FLAGS, ...own }, argv);
  return { values: values as FlagValues<typeof MANAGER_FLAGS> & FlagValues<D>, help };
}

/**
 * An operator's whole main(): flags (with --help, and a usage error naming a bad flag or value),
 * credentials, the manager, controllers, then run until SIGTERM. Exit codes: 0 stopped, 1 failed,
 * 2 usage.
 */
export async function runOperator<D extends FlagDefinitions>(def: OperatorDefinition<D>, argv: string[] = process.argv.slice(2)): Promise<void> {
  const usage = operatorUsage(def as OperatorDefinition<FlagDefinitions>);
  let parsed;
  try {
    parsed = parseOperatorFlags(def, argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    console.error(`${def.name}: ${err.message}\n\n${usage}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(usage);
    process.exit(0);
  }
  let manager: Manager;
  try {
    manager = Manager.fromParsedFlags(def.name, parsed.values, {}, { selectShardsOnServer: def.sharding?.selectOnServer });
    await def.setup(manager, parsed.values);
  } catch (err) {
    // Flags that parse but cannot go together are a usage error too.
    console.error(`${def.name}: ${(err as Error).message}${err instanceof FlagError ? `\n\n${usage}` : ''}`);
    process.exit(err instanceof FlagError ? 2 : 1);
  }
  await manager.runUntilSignalled();
}
