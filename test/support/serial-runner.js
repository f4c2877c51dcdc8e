/**
 * Jest's own runner, one test file at a time (`isSerial`): for the operating tests, each of
 * which starts real server processes and PostgreSQL clusters of its own. Jest runs one runner's
 * files after another's, so these do not share the machine with the in-process files either.
 */
const TestRunner = require('jest-runner').default;

module.exports = class SerialRunner extends TestRunner {
  // A field, as jest-runner declares it: a getter would be hidden by the base class's field.
  isSerial = true;
};
