import { parseArgs } from 'node:util';
import type { SolverOptions } from './server.js';

export const USAGE = 'usage: acme-solver --listen-port=8089 --domain=<name> --token=<token> --key=<key authorization>';

/** What the solver's command line asks for: its usage, or a challenge to serve on a port. */
export type SolverArgs = { help: true } | { help: false; port: number; solver: SolverOptions };

/**
 * The solver's command line, as a solver pod's args give it (opkit's and cert-manager's pods pass
 * the same flags). Throws, saying what is wrong, for an unknown flag or a missing one.
 */
export function parseSolverArgs(args: string[]): SolverArgs {
  const { values } = parseArgs({
    args,
    options: {
      'listen-port': { type: 'string', default: '8089' },
      domain: { type: 'string' },
      token: { type: 'string' },
      key: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  const port = Number(values['listen-port']);
  if (!values.domain || !values.token || !values.key || !Number.isInteger(port)) throw new Error('--domain, --token and --key are required');
  return { help: false, port, solver: { domain: values.domain, token: values.token, key: values.key } };
}
