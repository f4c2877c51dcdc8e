/**
 * Rows of a relation read as JSON inside another row's statement (json_build_object), made back
 * into the rows the driver would have answered: bigints sent as text (JSON numbers would lose
 * digits past 2^53), timestamps as PostgreSQL's text and parsed by the driver's parser for them
 * (db/timestamps.ts, taken here directly, not by whichever parser was registered when a module
 * loaded; a JSON timestamp keeps microseconds that the parser truncates the same way, but its
 * text differs).
 */
import { parseTimestamptz } from './timestamps';

/** A relation's columns, and those sent as text: its timestamps (parsed back) and its bigints. */
export interface Shape {
  columns: string[];
  timestamps: string[];
  bigints: string[];
}

/** Column names without their table (`customers.id` → `id`). */
export const bare = (columns: string[]) => columns.map((column) => column.slice(column.indexOf('.') + 1));

/** The JSON object of `alias`'s row in `shape`. */
export function jsonOf(alias: string, shape: Shape): string {
  const text = new Set([...shape.timestamps, ...shape.bigints]);
  return `json_build_object(${shape.columns.map((column) => `'${column}', ${alias}.${column}${text.has(column) ? '::text' : ''}`).join(', ')})`;
}

/** A relation's JSON object as the row the driver would have answered. */
export function revive<T>(shape: Shape, object: Record<string, unknown>): T {
  for (const column of shape.timestamps) if (typeof object[column] === 'string') object[column] = parseTimestamptz(object[column] as string);
  return object as T;
}
