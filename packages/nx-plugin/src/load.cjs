// nx loads a generator with require() and can only read TypeScript through ts-node or swc, which
// this workspace does not carry. The generators are TypeScript (typechecked, linted and tested like
// the rest): each is compiled here with esbuild, in memory, the first time nx asks for it.
'use strict';
const { buildSync } = require('esbuild');
const Module = require('node:module');
const { join } = require('node:path');

function load(name) {
  const entry = join(__dirname, 'generators', name, 'generator.ts');
  const { outputFiles } = buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    // A generator finds its templates next to its source: import.meta.dirname is the generator's folder.
    define: { 'import.meta.dirname': JSON.stringify(join(__dirname, 'generators', name)) },
    packages: 'external',
    logLevel: 'silent',
  });
  const m = new Module(entry, module);
  m.filename = entry;
  m.paths = Module._nodeModulePaths(join(__dirname, 'generators', name));
  m._compile(outputFiles[0].text, entry);
  return m.exports.default;
}

module.exports = {
  get operator() {
    return load('operator');
  },
  get api() {
    return load('api');
  },
  get webhook() {
    return load('webhook');
  },
  get preset() {
    return load('preset');
  },
};
