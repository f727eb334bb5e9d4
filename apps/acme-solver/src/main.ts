import { parseArgs } from 'node:util';
import { createSolverServer } from './server.js';

const USAGE = 'usage: acme-solver --listen-port=8089 --domain=<name> --token=<token> --key=<key authorization>';

function main() {
  let values;
  try {
    values = parseArgs({
      options: {
        'listen-port': { type: 'string', default: '8089' },
        domain: { type: 'string' },
        token: { type: 'string' },
        key: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (err) {
    console.error(`acme-solver: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const port = Number(values['listen-port']);
  if (!values.domain || !values.token || !values.key || !Number.isInteger(port)) {
    console.error(`acme-solver: --domain, --token and --key are required\n${USAGE}`);
    process.exit(2);
  }
  const server = createSolverServer({ domain: values.domain, token: values.token, key: values.key }).listen(port, () => {
    console.log(JSON.stringify({ level: 'info', msg: 'serving the HTTP-01 challenge', domain: values.domain, port }));
  });
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => server.close(() => process.exit(0)));
}

main();
