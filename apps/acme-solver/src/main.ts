import { parseSolverArgs, USAGE, type SolverArgs } from './args.js';
import { createSolverServer } from './server.js';

function main() {
  let parsed: SolverArgs;
  try {
    parsed = parseSolverArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`acme-solver: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const { port, solver } = parsed;
  const server = createSolverServer(solver).listen(port, () => {
    console.log(JSON.stringify({ level: 'info', msg: 'serving the HTTP-01 challenge', domain: solver.domain, port }));
  });
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => server.close(() => process.exit(0)));
}

main();
