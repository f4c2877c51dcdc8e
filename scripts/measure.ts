import { readdirSync, readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

/** The middle value (the upper one of an even count): what the benchmarks quote. */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

let gcMs: number | undefined;

/**
 * This process's garbage collection pauses so far, in ms: every in-process server's and the
 * load's, one heap. Counted from the first call on; a difference of two calls is what fell
 * between them.
 */
export function gcPausedMs(): number {
  if (gcMs === undefined) {
    gcMs = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs! += entry.duration;
    }).observe({ entryTypes: ['gc'] });
  }
  return gcMs;
}

/** Clock ticks per second of /proc's times (Linux's USER_HZ). */
const TICKS = 100;

/**
 * CPU time in ms so far of the process `root` (or those whose command line contains it) and of all their
 * descendants, with what their exited children used (Linux /proc; NaN elsewhere or when none).
 */
export function treeCpuMs(root: number | string): number {
  try {
    const stats = new Map<number, { ppid: number; own: number; children: number }>();
    const roots: number[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        // After the command's name in parentheses: state ppid ... utime(14) stime(15) cutime(16) cstime(17).
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const [ppid, utime, stime, cutime, cstime] = [1, 11, 12, 13, 14].map((index) => Number(fields[index]));
        stats.set(Number(name), { ppid: ppid!, own: utime! + stime!, children: cutime! + cstime! });
        if (typeof root === 'number' ? Number(name) === root : readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(root)) roots.push(Number(name));
      } catch {
        // Gone since the directory was read.
      }
    }
    if (roots.length === 0) return NaN;
    const inTree = new Set(roots);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, { ppid }] of stats) if (!inTree.has(pid) && inTree.has(ppid)) (inTree.add(pid), (grew = true));
    }
    let ticks = 0;
    for (const pid of inTree) ticks += stats.get(pid)!.own + (roots.includes(pid) ? stats.get(pid)!.children : 0);
    return (ticks * 1000) / TICKS;
  } catch {
    return NaN;
  }
}
