/**
 * The operate project's files start real server processes (`node --import tsx server/main.ts`),
 * each loading and transpiling the server on its own: on a 2-core machine busy with another run
 * one start passed the 60 s every file gets (startup-failures.test.ts, "a database that does not
 * exist is one clear line, at once"). A safety net against a hang, not a measure.
 */
jest.setTimeout(180_000);
