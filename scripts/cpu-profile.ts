/**
 * Where a process's CPU went, from the `.cpuprofile` that `node --cpu-prof` writes as it exits:
 * each sample's time given to the package of the function it was in (its self time), over a
 * window of the profile (the load, without the start-up and the stop). What the benchmarks
 * print to say what a cost is made of: the shares come from the process's own samples, so a
 * machine slowed by other work changes them far less than it changes the rates.
 */
import { readFileSync } from 'node:fs';

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The components that are no package's: besides them, a component is a package's name. */
export const GARBAGE_COLLECTION = 'garbage collection';
export const NATIVE = 'native (system calls, the engine)';
export const NODE_OWN = 'node (its own modules)';
export const THE_SERVICE = 'the service';
const IDLE = 'idle';

/** The package a function belongs to: `@opentelemetry/sdk-trace`, `pg`, `node:` internals, the garbage collector, `the service`. */
function componentOf(functionName: string, url: string): string {
  if (!url) return functionName === '(garbage collector)' ? GARBAGE_COLLECTION : functionName === '(idle)' ? IDLE : NATIVE;
  const vendored = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (vendored) return vendored[1]!;
  if (url.startsWith('node:')) return NODE_OWN;
  return THE_SERVICE;
}

/** Components that are code of somebody's: a package, or the service. */
const isCode = (component: string) => component !== GARBAGE_COLLECTION && component !== IDLE && component !== NATIVE && component !== NODE_OWN;

/**
 * The CPU time of each component in µs, between `fromEnd` and `toEnd` µs before the profile's
 * end (the load's window), idle time left out. With `byCaller`, the time in Node's own modules
 * and in native code (JSON.stringify, a socket's write, a hash) goes to the package or the
 * service that called it, the nearest on the sample's stack: what a package costs, not only
 * its own lines. Garbage collection, and the work Node starts from its event loop with no code
 * of anybody's above it, keep their own rows.
 */
export function cpuByComponent(file: string, { fromEnd, toEnd }: { fromEnd: number; toEnd: number }, byCaller = false): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const own = new Map(profile.nodes.map((node) => [node.id, componentOf(node.callFrame.functionName, node.callFrame.url)]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const callerOf = (id: number): string => {
    const component = own.get(id)!;
    if (component === GARBAGE_COLLECTION || component === IDLE || isCode(component)) return component;
    for (let at = parents.get(id); at !== undefined; at = parents.get(at)) if (isCode(own.get(at)!)) return own.get(at)!;
    return component;
  };
  const components = byCaller ? new Map(profile.nodes.map((node) => [node.id, callerOf(node.id)])) : own;
  const totals = new Map<string, number>();
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    at += profile.timeDeltas[index]!;
    if (at < profile.endTime - fromEnd || at > profile.endTime - toEnd) continue;
    const component = components.get(profile.samples[index]!)!;
    if (component === IDLE) continue;
    totals.set(component, (totals.get(component) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }
  return totals;
}
