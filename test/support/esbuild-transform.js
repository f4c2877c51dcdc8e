/**
 * jest's transform of TypeScript: esbuild strips the types, file by file, as tsx does for
 * `npm start` (type checking is `npm run typecheck`). It does what ts-jest did with
 * `isolatedModules`, at a fraction of the CPU: on a fresh machine every file of the server is
 * transformed once per run, before jest's cache has anything.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const esbuild = require('esbuild');

const { compilerOptions } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'tsconfig.json'), 'utf8'));
// What esbuild reads of the compiler's options (class fields as the target defines them).
const tsconfigRaw = { compilerOptions: { target: compilerOptions.target, useDefineForClassFields: compilerOptions.useDefineForClassFields } };
const options = { loader: 'ts', format: 'cjs', target: 'node20', sourcemap: 'external', tsconfigRaw };
const version = createHash('sha256')
  .update(readFileSync(__filename))
  .update(esbuild.version)
  .update(JSON.stringify(options))
  .digest('hex');

module.exports = {
  process(source, path) {
    const { code, map } = esbuild.transformSync(source, { ...options, sourcefile: path });
    return { code, map };
  },
  getCacheKey(source, path) {
    return createHash('sha256').update(version).update(path).update('\0').update(source).digest('hex');
  },
};
