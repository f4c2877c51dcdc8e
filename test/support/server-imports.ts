/**
 * The import graph of server/, read from the sources (for the architecture tests): every file,
 * the room each belongs to, and each file's relative imports resolved to files of server/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

export const SERVER = join(__dirname, '../../server');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every .ts file of server/, by absolute path. */
export const serverFiles = (): string[] => sources(SERVER);

/** The room of a file: its first folder under server/; a top-level file `server/x.ts` is the room `:x`. */
export function roomOf(path: string): string {
  const [first, ...rest] = relative(SERVER, path).split('/');
  return rest.length > 0 ? first! : `:${first!.replace(/\.ts$/, '')}`;
}

/** Every relative import (static, type-only, re-export or dynamic) of a file, resolved to a file of server/. */
export function importsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map((match) => match[1]!);
  return specifiers
    .map((specifier) => normalize(join(dirname(path), specifier)))
    .map((base) => [base, `${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate) && statSync(candidate).isFile()))
    .filter((target): target is string => target !== undefined && target.startsWith(SERVER));
}

/** A path relative to server/, for messages. */
export const shown = (path: string): string => relative(SERVER, path);

/**
 * The import circles among `files` (each as its files in order, the first repeated at the end),
 * found by a depth-first walk; one circle per back edge met.
 */
export function importCircles(files: string[], edgesOf: (file: string) => string[] = importsOf): string[][] {
  const edges = new Map(files.map((file) => [file, edgesOf(file)]));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue;
      if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].map(shown));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return circles;
}
