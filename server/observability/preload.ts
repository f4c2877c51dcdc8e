/**
 * Imported first by server/main.ts (before express, pg, knex, undici and pino load), so that the
 * OpenTelemetry instrumentations patch them as they load. Starts nothing unless the OTEL_*
 * variables ask for traces (telemetry.ts).
 */
import { startTelemetry } from './telemetry';

startTelemetry();
