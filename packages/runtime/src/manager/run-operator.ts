import type { ParseArgsConfig } from 'node:util';
import { FlagError, MANAGER_FLAG_HELP, parseManagerFlags } from './flags.js';
import { Manager } from './manager.js';

export interface OperatorDefinition<E extends NonNullable<ParseArgsConfig['options']>> {
  /** The operator's name (field manager, lease, events, logs). */
  name: string;
  /** One line for --help. */
  description: string;
  /** The operator's own flags, beside the standard ones. */
  flags?: E;
  /** Help lines for those flags. */
  flagHelp?: string;
  /** Adds controllers to the manager; receives every parsed flag value. */
  setup(manager: Manager, values: Record<string, unknown>): void | Promise<void>;
}

/**
 * An operator's whole main(): flags (with --help, and a usage error naming a bad flag), credentials,
 * the manager, controllers, then run until SIGTERM. Exit codes: 0 stopped, 1 failed, 2 usage.
 */
export async function runOperator<E extends NonNullable<ParseArgsConfig['options']>>(def: OperatorDefinition<E>, argv: string[] = process.argv.slice(2)): Promise<void> {
  const usage = `${def.name}: ${def.description}\n\nFlags:${MANAGER_FLAG_HELP}${def.flagHelp ? `\n${def.flagHelp}` : ''}`;
  let parsed;
  try {
    parsed = parseManagerFlags(argv, def.flags);
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
    manager = Manager.fromParsedFlags(def.name, parsed.flags);
    await def.setup(manager, parsed.values);
  } catch (err) {
    console.error(`${def.name}: ${(err as Error).message}`);
    process.exit(1);
  }
  await manager.runUntilSignalled();
}
