/**
 * How the benchmarks share a CPU profile out (scripts/cpu-profile.ts), on a made-up profile:
 * by each sample's own function, or with Node's and native work given to the code that called
 * it, as `bench:api -- --watching` does before it prints its bound.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuByComponent } from '../../scripts/cpu-profile';

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });

// (root) ─┬─ handler (the service) ── stringify (native)
//         ├─ startSpan (@opentelemetry/sdk-trace) ── writeGeneric (node:) ── (native)
//         ├─ onread (node:, from the event loop)
//         ├─ (garbage collector)
//         └─ (idle)
const nodes = [
  frame(1, '(root)', '', [2, 4, 7, 8, 9]),
  frame(2, 'handler', 'file:///srv/app/server/customers/customer-routes.ts', [3]),
  frame(3, 'stringify', ''),
  frame(4, 'startSpan', 'file:///srv/app/node_modules/@opentelemetry/sdk-trace/build/src/Tracer.js', [5]),
  frame(5, 'writeGeneric', 'node:internal/stream_base_commons', [6]),
  frame(6, 'randomFill', ''),
  frame(7, 'onread', 'node:net'),
  frame(8, '(garbage collector)', ''),
  frame(9, '(idle)', ''),
];
// µs per node: handler 10 itself, stringify 20, startSpan 5, writeGeneric 7, randomFill 3, onread 40, gc 11, idle 1000.
const samples = [2, 3, 4, 5, 6, 7, 8, 9];
const deltas = [10, 20, 5, 7, 3, 40, 11, 1000];

function profileFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'dcs-profile-')), 'made-up.cpuprofile');
  const startTime = 1_000_000;
  writeFileSync(file, JSON.stringify({ nodes, startTime, endTime: startTime + 1096, samples, timeDeltas: deltas }));
  return file;
}

const whole = { fromEnd: 10_000, toEnd: 0 };

test('by its own function, each sample goes to the package of the function it was in; idle time is left out', () => {
  expect(Object.fromEntries(cpuByComponent(profileFile(), whole))).toEqual({
    'the service': 10,
    'native (system calls, the engine)': 23,
    '@opentelemetry/sdk-trace': 5,
    'node (its own modules)': 47,
    'garbage collection': 11,
  });
});

test("by caller, Node's and native work goes to the nearest code above it; what Node's event loop started alone, and GC, keep their rows", () => {
  expect(Object.fromEntries(cpuByComponent(profileFile(), whole, true))).toEqual({
    'the service': 30,
    '@opentelemetry/sdk-trace': 15,
    'node (its own modules)': 40,
    'garbage collection': 11,
  });
});

test("only the window's samples count (a load's, without the start and the stop)", () => {
  // The samples end 10, 30, 35, 42, 45, 85, 96 and 1096 µs after the start; the window is 31 to
  // 95 (1065 and 1001 µs before the end): startSpan's, writeGeneric's, randomFill's and onread's.
  const windowed = cpuByComponent(profileFile(), { fromEnd: 1065, toEnd: 1001 }, true);
  expect(Object.fromEntries(windowed)).toEqual({ '@opentelemetry/sdk-trace': 15, 'node (its own modules)': 40 });
});
