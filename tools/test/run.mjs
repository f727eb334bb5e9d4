#!/usr/bin/env node
// The README's test command (npm test): format, lint, typecheck, build, unit and integration tests,
// and the e2e suites in both cluster modes. Before nx runs, what takes minutes the first time is
// prepared with progress shown: the control-plane binaries, cert-manager's controller (the
// coexistence test runs it beside opkit's), the Debian packages some tests run (nginx, BIND 9;
// where this is a root Debian shell) and, where the kind mode can run, the Docker engine (installed
// and started where it may be), kind, its node image and every image the suites load. At the end,
// an engine opkit started for this run is stopped, whatever the outcome.
//   node tools/test/run.mjs [extra nx args]       OPKIT_E2E_MODE=local skips the kind preparation
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const wantsKind = (process.env.OPKIT_E2E_MODE ?? 'local,kind')
  .split(',')
  .map((s) => s.trim())
  .includes('kind');
// The engine is held for this process while it runs (the helper commands come and go).
const containers = (command) => [
  'node',
  [join(root, 'tools/build/run-ts.mjs'), 'packages/testing/src/containers/cli.ts', command, '--for-pid', String(process.pid)],
];

let child;
// Ctrl-C reaches the whole foreground process group; the step running gets it and ends, and this
// process stays to clean up. A second Ctrl-C (or a SIGTERM) is passed on.
let interrupted = 0;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    interrupted++;
    if (sig === 'SIGTERM' || interrupted > 1) child?.kill(sig);
  });
}

function step(label, [cmd, args], { optional = false } = {}) {
  return new Promise((res) => {
    const t0 = Date.now();
    console.log(`==> ${label}`);
    child = spawn(cmd, args, { cwd: root, env, stdio: 'inherit' });
    child.on('exit', (code, signal) => {
      child = undefined;
      const s = Math.round((Date.now() - t0) / 1000);
      if (code !== 0 && !optional) console.log(`==> ${label}: failed (${signal ?? `exit ${code}`}) after ${s}s`);
      else console.log(`==> ${label}: done in ${s}s`);
      res(code ?? 1);
    });
  });
}

let status = await step('control-plane binaries (built once from Go modules, then cached)', ['node', [join(root, 'tools/control-plane/ensure-binaries.mjs')]]);
// What the cert operator's tests run beside it (not needed by the demo): cert-manager's controller,
// cmctl, and an external issuer.
if (status === 0 && !interrupted)
  status = await step(
    "cert-manager's controller and a DNS webhook solver of its module, cmctl and the AWS Private CA issuer (built once from their Go modules, then cached)",
    ['node', [join(root, 'tools/control-plane/ensure-binaries.mjs'), '--group', 'comparators']],
  );
if (status === 0 && !interrupted)
  status = await step('Debian packages some tests run (nginx, BIND 9)', ['node', [join(root, 'tools/test/debian-packages.mjs')]]);
if (status === 0 && wantsKind && !interrupted) status = await step('the kind mode: container engine, kind, node image, images', containers('kind-prepare'));
if (status === 0 && !interrupted) status = await step('nx sync:check', ['npx', ['nx', 'sync:check']]);
// First and cheap (a few seconds): a formatting slip fails here, not after an hour of tests.
if (status === 0 && !interrupted) status = await step('format (prettier --check)', ['npx', ['prettier', '--check', '--log-level=warn', '.']]);
if (status === 0 && !interrupted) {
  status = await step('lint, typecheck, build, API docs, unit and integration tests, e2e', [
    'npx',
    ['nx', 'run-many', '-t', 'lint', 'typecheck', 'build', 'api-docs', 'test', 'e2e', '--outputStyle=stream', ...process.argv.slice(2)],
  ]);
}
if (wantsKind) await step('stopping what this run started', containers('engine-stop'), { optional: true });
process.exit(interrupted && !status ? 130 : status);
