/**
 * Where a process's CPU went, from the `.cpuprofile` that `node --cpu-prof` writes as it exits:
 * each sample's time given to the package of the function it was in (its self time), over a
 * window of the profile (the load, without the start-up and the stop). What the benchmarks
 * print to say what a cost is made of: the shares come from the process's own samples, so a
 * machine slowed by other work changes them far less than it changes the rates.
 */
import { readFileSync } from 'node:fs';

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The package a function belongs to: `@opentelemetry/sdk-trace`, `pg`, `node:` internals, the garbage collector, `the service`. */
function componentOf(functionName: string, url: string): string {
  if (!url) return functionName === '(garbage collector)' ? 'garbage collection' : functionName === '(idle)' ? 'idle' : 'native (system calls, the engine)';
  const vendored = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (vendored) return vendored[1]!;
  if (url.startsWith('node:')) return 'node (its own modules)';
  return 'the service';
}

/**
 * The CPU time of each component in µs, between `fromEnd` and `toEnd` µs before the profile's
 * end (the load's window), idle time left out.
 */
export function cpuByComponent(file: string, { fromEnd, toEnd }: { fromEnd: number; toEnd: number }): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const components = new Map(profile.nodes.map((node) => [node.id, componentOf(node.callFrame.functionName, node.callFrame.url)]));
  const totals = new Map<string, number>();
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    at += profile.timeDeltas[index]!;
    if (at < profile.endTime - fromEnd || at > profile.endTime - toEnd) continue;
    const component = components.get(profile.samples[index]!)!;
    if (component === 'idle') continue;
    totals.set(component, (totals.get(component) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }
  return totals;
}
