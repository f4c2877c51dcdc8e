/**
 * Builds the `client/` package (run by its `prepack`, so `npm pack ./client` always ships a
 * fresh build): JavaScript for ESM (`dist/esm`) and CommonJS (`dist/cjs`), declarations beside
 * each, and one copy of the generated types (`dist/schema.d.ts`): the package needs nothing
 * outside itself but openapi-fetch.
 *
 * In the repository the client imports `../generated/schema` and `./webhooks` (the server and
 * the tests use it as source); the build rewrites those imports to point inside the package,
 * with the file extensions Node's ESM loader needs. Each file is compiled on its own (no type
 * checking here: `npm run typecheck` checks the source, and the package test type-checks a
 * project that installs the tarball), which keeps the build to a second or two.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(__dirname, '..');
const client = join(root, 'client');
const dist = join(client, 'dist');

/** Relative imports made package-local and explicit: the generated types are copied beside. */
export function packageImports(source: string, file: string): string {
  return source.replace(/(from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g, (_match, keyword: string, specifier: string) => {
    // One copy of the (large) generated types, shared by the two builds.
    if (specifier === '../generated/schema') return `${keyword}'../schema.js'`;
    if (specifier.startsWith('./') && !specifier.slice(2).includes('/')) return `${keyword}'${specifier}.js'`;
    throw new Error(`${file} imports ${specifier}, outside the client package`);
  });
}

const FORMATS = {
  esm: { type: 'module', module: ts.ModuleKind.ES2022 },
  cjs: { type: 'commonjs', module: ts.ModuleKind.CommonJS },
} as const;

function fail(file: string, diagnostics: readonly ts.Diagnostic[] | undefined): void {
  if (diagnostics?.length) {
    throw new Error(`${file}: ${diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`);
  }
}

export function buildClient(): void {
  rmSync(dist, { recursive: true, force: true });
  const sources = readdirSync(client).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'));
  for (const [format, { type, module }] of Object.entries(FORMATS)) {
    const out = join(dist, format);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'package.json'), JSON.stringify({ type }) + '\n');
    for (const name of sources) {
      const fileName = `client/${name}`;
      const source = packageImports(readFileSync(join(client, name), 'utf8'), fileName);
      const compilerOptions: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module, esModuleInterop: true, declaration: true };
      const js = ts.transpileModule(source, { fileName, compilerOptions, reportDiagnostics: true });
      fail(fileName, js.diagnostics);
      const types = ts.transpileDeclaration(source, { fileName, compilerOptions, reportDiagnostics: true });
      fail(fileName, types.diagnostics);
      const base = name.replace(/\.ts$/, '');
      writeFileSync(join(out, `${base}.js`), js.outputText);
      writeFileSync(join(out, `${base}.d.ts`), types.outputText);
    }
  }
  copyFileSync(join(root, 'generated', 'schema.d.ts'), join(dist, 'schema.d.ts'));
}

if (require.main === module) {
  try {
    buildClient();
    console.log(`built ${dist}`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
