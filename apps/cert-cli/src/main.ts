#!/usr/bin/env node
import { runCli } from './cli.js';

runCli(process.argv.slice(2), {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
  now: Date.now,
  width: process.stdout.isTTY ? process.stdout.columns : 200,
}).then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`opkit-cert: ${err.message}\n`);
    process.exit(1);
  },
);
