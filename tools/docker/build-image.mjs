#!/usr/bin/env node
// Builds an operator image with a fixed, non-latest tag (the app's version), where a Docker engine
// is available. Without one it says so and fails: it never pretends an image was built.
//   node tools/docker/build-image.mjs <app> [--tag <tag>]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const app = process.argv[2];
if (!app || !existsSync(join(root, 'apps', app, 'Dockerfile'))) {
  console.error(`usage: build-image.mjs <app>  (an app under apps/ with a Dockerfile)`);
  process.exit(2);
}
const version = JSON.parse(readFileSync(join(root, 'apps', app, 'package.json'), 'utf8')).version;
const tagArg = process.argv.indexOf('--tag');
const image = `opkit/${app}:${tagArg > 0 ? process.argv[tagArg + 1] : version}`;

export function dockerAvailable() {
  const r = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const engine = dockerAvailable();
if (!engine) {
  console.error(`cannot build ${image}: no Docker engine is reachable (\`docker info\` failed). Run this where Docker runs.`);
  process.exit(1);
}
console.log(`building ${image} with Docker ${engine}…`);
const r = spawnSync('docker', ['build', '-f', join('apps', app, 'Dockerfile'), '-t', image, '.'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
console.log(`built ${image}`);
