/**
 * Which OpenTelemetry instrumentations the server loads when traces are on: http, express, pg
 * and undici unless OTEL_NODE_DISABLED_INSTRUMENTATIONS names them, knex and pino only when
 * OTEL_NODE_ENABLED_INSTRUMENTATIONS names them (server/observability/telemetry.ts), and none of
 * it unless an exporter is asked for.
 */
import { instrumentationsWanted, tracesWanted } from '../../server/observability/telemetry';

test('by default: http, express, pg and undici; not knex (pg has each statement already) nor pino (our mixin writes the trace ids)', () => {
  expect(instrumentationsWanted({})).toEqual(['http', 'express', 'pg', 'undici']);
});

test('OTEL_NODE_ENABLED_INSTRUMENTATIONS adds knex and pino, OTEL_NODE_DISABLED_INSTRUMENTATIONS takes any away; unknown names are ignored', () => {
  expect(instrumentationsWanted({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'knex, Pino,redis' })).toEqual(['http', 'express', 'pg', 'undici', 'knex', 'pino']);
  expect(instrumentationsWanted({ OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'express,undici,mongodb' })).toEqual(['http', 'pg']);
  expect(instrumentationsWanted({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'knex', OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'knex,pg' })).toEqual(['http', 'express', 'undici']);
});

test('traces are on only when an exporter is asked for, and never with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
  expect(tracesWanted({})).toBe(false);
  expect(tracesWanted({ OTEL_NODE_ENABLED_INSTRUMENTATIONS: 'knex' })).toBe(false);
  expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
  expect(tracesWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
  expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
});
