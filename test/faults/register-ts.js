/**
 * `node -r ./test/faults/register-ts.js subgraphs/<name>/main.ts`: runs a service from its
 * TypeScript sources, each file transpiled on load with the project's tsconfig (as ts-jest does, no
 * type check), so a test that spawns a real process runs the code under test, never a stale dist/.
 * Plain JavaScript because it is what makes TypeScript loadable.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.resolve(__dirname, '../..');
const { config } = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root);
const compilerOptions = { ...options, sourceMap: false, inlineSourceMap: true, inlineSources: false, declaration: false, noEmit: false };

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
