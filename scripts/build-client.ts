/**
 * Builds the `client/` package (run by its `prepack`, so `npm pack ./client` always ships a
 * fresh build): JavaScript for ESM (`dist/esm`) and CommonJS (`dist/cjs`), each with its
 * declarations, and one copy of the generated types (`dist/schema.d.ts`): the package needs
 * nothing outside itself but openapi-fetch.
 *
 * In the repository the client imports `../generated/schema` and `./webhooks` (the server and
 * the tests use it as source); the build compiles a copy whose imports point inside the
 * package, with the file extensions Node's ESM loader needs. tsc checks each copy as Node
 * resolves it (NodeNext, under a package.json of the matching type).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const root = resolve(__dirname, '..');
const client = join(root, 'client');
const dist = join(client, 'dist');
// Inside client/, so that tsc finds openapi-fetch and @types/node in the repository's node_modules.
const staging = join(client, '.build');
const schema = join(root, 'generated', 'schema.d.ts');
const tsc = require.resolve('typescript/bin/tsc');

/** Relative imports made package-local and explicit: the generated types are copied beside. */
export function packageImports(source: string, file: string): string {
  return source.replace(/(from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g, (_match, keyword: string, specifier: string) => {
    // One copy of the (large) generated types, beside the two builds.
    if (specifier === '../generated/schema') return `${keyword}'../schema.js'`;
    if (specifier.startsWith('./') && !specifier.slice(2).includes('/')) return `${keyword}'${specifier}.js'`;
    throw new Error(`${file} imports ${specifier}, outside the client package`);
  });
}

async function compile(format: 'esm' | 'cjs'): Promise<void> {
  const dir = join(staging, format);
  mkdirSync(dir, { recursive: true });
  const type = format === 'esm' ? 'module' : 'commonjs';
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }) + '\n');
  for (const file of readdirSync(client).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))) {
    writeFileSync(join(dir, file), packageImports(readFileSync(join(client, file), 'utf8'), `client/${file}`));
  }
  const out = join(dist, format);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
        declaration: true,
        types: ['node'],
        rootDir: '.',
        outDir: out,
      },
      include: ['*.ts'],
    }),
  );
  await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: root });
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type }) + '\n');
}

async function main(): Promise<void> {
  rmSync(dist, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  copyFileSync(schema, join(staging, 'schema.d.ts'));
  try {
    await Promise.all([compile('esm'), compile('cjs')]);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  copyFileSync(schema, join(dist, 'schema.d.ts'));
  console.log(`built ${dist}`);
}

if (require.main === module) {
  main().catch((error: Error & { stdout?: string }) => {
    console.error(error.stdout || error.message);
    process.exit(1);
  });
}
