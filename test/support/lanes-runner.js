/**
 * The runner of both projects, in two lanes side by side: the `in-process` files on jest's
 * pool of workers (one per core), and the `operate` files (real server processes and
 * PostgreSQL clusters of their own) one at a time in a worker of their own. An operating test
 * spends most of its time waiting on its processes (a start, a lease, a kill), so it runs
 * beside the in-process files instead of after them. Jest runs one runner's files after
 * another's, so both projects name this one runner.
 *
 * When jest runs in band (`--runInBand`, or one file), every file runs in jest's own process,
 * one after another, as it would with jest's own runner.
 */
const TestRunner = require('jest-runner').default;
const { EmittingTestRunner } = require('jest-runner');

const isOperate = (test) => test.context.config.displayName?.name === 'operate';

module.exports = class LanesRunner extends EmittingTestRunner {
  constructor(globalConfig, context) {
    super(globalConfig, context);
    this.pool = new TestRunner(globalConfig, context);
    this.lane = new TestRunner({ ...globalConfig, maxWorkers: 1 }, context);
  }

  async runTests(tests, watcher, options) {
    const operate = tests.filter(isOperate);
    const inProcess = tests.filter((test) => !isOperate(test));
    if (options.serial) {
      if (inProcess.length > 0) await this.pool.runTests(inProcess, watcher, options);
      if (operate.length > 0) await this.lane.runTests(operate, watcher, options);
      return;
    }
    await Promise.all([
      inProcess.length > 0 ? this.pool.runTests(inProcess, watcher, options) : undefined,
      operate.length > 0 ? this.lane.runTests(operate, watcher, options) : undefined,
    ]);
  }

  /** Jest listens to both lanes as to one runner. */
  on(eventName, listener) {
    const unsubscribes = [this.pool.on(eventName, listener), this.lane.on(eventName, listener)];
    return () => unsubscribes.forEach((unsubscribe) => unsubscribe());
  }
};
