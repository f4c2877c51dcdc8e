/**
 * Text PostgreSQL cannot store: a NUL character (text and jsonb refuse it) and a lone UTF-16
 * surrogate (jsonb refuses its escape; text would silently turn it into U+FFFD). JSON and
 * percent-encoding can carry both, so they are refused here, before any route reads them:
 * in the path a 404 (no resource has such an id), in the query or the body a 422 on the field.
 */
import type { RequestHandler } from 'express';
import { ApiError, type FieldErrors } from '../kernel/errors';

// A NUL, a high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MESSAGE = 'must not contain a NUL character or an unpaired UTF-16 surrogate';
/** Deeper than any document schema goes; a deeper body is refused by the validator anyway. */
const MAX_DEPTH = 64;

export const isUnstorable = (text: string): boolean => UNSTORABLE.test(text);

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: the router answers that with a 400.
    return '';
  }
}

/**
 * A path naming NUL or a lone surrogate names nothing: 404, before any route looks it up. A
 * path without a `%` decodes to itself, so it is checked as it is.
 */
export const refuseUnstorablePath: RequestHandler = (req, _res, next) => {
  const path = req.path;
  next(isUnstorable(path.includes('%') ? decoded(path) : path) ? new ApiError('not_found', 'No such resource.') : undefined);
};

const child = (path: string, key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

function walk(value: unknown, path: string, errors: FieldErrors, depth: number): void {
  if (typeof value === 'string') {
    if (isUnstorable(value)) errors[path || 'body'] = [MESSAGE];
    return;
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, child(path, index), errors, depth + 1));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    // A key that cannot be stored is reported on the object that holds it.
    if (isUnstorable(key)) errors[path || 'body'] = [`keys ${MESSAGE}`];
    else walk(item, child(path, key), errors, depth + 1);
  }
}

/** The query and the JSON body: every string and every key, each offender a 422 on its field. */
export const refuseUnstorableText: RequestHandler = (req, _res, next) => {
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  for (const [name, value] of Object.entries(req.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (isUnstorable(name)) errors.query = [`names ${MESSAGE}`];
      else if (typeof item === 'string' && isUnstorable(item)) errors[`query.${name}`] = [MESSAGE];
    }
  }
  walk(req.body, '', errors, 0);
  next(Object.keys(errors).length > 0 ? ApiError.invalid(errors) : undefined);
};
