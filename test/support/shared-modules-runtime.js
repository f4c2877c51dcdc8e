/**
 * jest's module loader (its `runtime`), with some libraries loaded once per worker instead of
 * once per test file. Jest gives every file a registry of its own, so each file that starts the
 * app compiled and ran the same ~1,200 files of node_modules again (stripe alone is 220, lodash
 * 252, ajv and the OpenAPI validator ~180): about 1.1 s of CPU per file out of a warm worker.
 * The libraries named below are loaded with Node's own `require` instead, so a worker's later
 * files find them ready (the same measure: 0.45 s).
 *
 * Only libraries that hold no state of a test's and never ask `x instanceof Date` (or Error,
 * Array…) of what the app hands them are shared: a shared library lives in the worker's own
 * realm, the test file in jest's, and a Date made in one is not an `instanceof Date` in the
 * other. So pg, knex, pg-boss and pdfkit (which test dates so), express and body-parser (errors
 * the app tells apart) and pino (the test's log sink) stay per file. The project's own files
 * are never shared: each test file still loads the server afresh.
 */
const Runtime = require('jest-runtime').default;

const SHARED = new RegExp(
  `/node_modules/(${[
    'stripe',
    'lodash',
    'ajv',
    'ajv-draft-04',
    'ajv-formats',
    'express-openapi-validator',
    '@apidevtools/json-schema-ref-parser',
    '@jsdevtools/ono',
    'js-yaml',
    '@opentelemetry/api',
    'rate-limiter-flexible',
    'prom-client',
    'nodemailer',
    'fontkit',
    'mime-db',
    'mime-types',
    'iconv-lite',
    'zipcode-to-timezone',
  ].join('|')})/`,
);

/** Where a bare module name resolves from a file, once per worker (jest's resolver is slow). */
const resolved = new Map();

module.exports = class SharedModulesRuntime extends Runtime {
  requireModuleOrMock(from, moduleName) {
    if (moduleName !== '@jest/globals' && !moduleName.startsWith('.') && !moduleName.startsWith('/') && !this._resolver.isCoreModule(moduleName)) {
      const key = `${from}\0${moduleName}`;
      let path = resolved.get(key);
      if (path === undefined) {
        try {
          path = this._resolveCjsModule(from, moduleName);
        } catch {
          path = null; // jest's own loader says why
        }
        resolved.set(key, path);
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      if (path && SHARED.test(path)) return require(path);
    }
    return super.requireModuleOrMock(from, moduleName);
  }
};
