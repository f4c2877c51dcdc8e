/**
 * Multipart uploads, for the operations whose document takes `multipart/form-data` (and only
 * those: the operation the validator matched says so). The parts are read into memory within
 * fixed limits — one file of at most `MAX_UPLOAD_BYTES`, a few short text fields — and each
 * limit broken is a 4xx in the spec's shape, never the library's 500. The file's part is then
 * present in the body as the validator expects (an empty string, as express-openapi-validator's
 * own uploader leaves it), so the document's schema still checks every field; the bytes are
 * `uploadedFile(req)`'s, for files/file-types.ts to check and the storage port to keep.
 */
import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { ApiError } from '../kernel/errors';

/** 10 MB, as the document says: 10 × 1024 × 1024 bytes. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

const parse = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 50, fieldSize: 64 * 1024, parts: 51, headerPairs: 100 },
}).any();

const SENTENCES: Record<string, ApiError> = {
  LIMIT_FILE_SIZE: new ApiError('payload_too_large', `The file is larger than 10 MB (${MAX_UPLOAD_BYTES} bytes).`),
  LIMIT_FILE_COUNT: ApiError.field('file', 'only one file may be sent'),
  LIMIT_PART_COUNT: new ApiError('payload_too_large', 'The form has too many parts.'),
  LIMIT_FIELD_COUNT: new ApiError('payload_too_large', 'The form has too many fields.'),
  LIMIT_FIELD_VALUE: new ApiError('payload_too_large', 'A field of the form is longer than 65536 bytes.'),
  LIMIT_FIELD_KEY: new ApiError('bad_request', 'A field name of the form is too long.'),
};

function uploadError(error: unknown): ApiError {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && SENTENCES[code]) return SENTENCES[code]!;
  // A body cut short, a part without headers, a missing boundary: the form cannot be read.
  return new ApiError('bad_request', 'The multipart/form-data body could not be read.');
}

const takesMultipart = (req: Request): boolean => {
  const content = (req as { openapi?: { schema?: { requestBody?: { content?: Record<string, unknown> } } } }).openapi?.schema?.requestBody?.content;
  return Boolean(content?.['multipart/form-data']) && isMultipart(req);
};

/** Whether the request's body is a multipart form (whatever the operation). */
export const isMultipart = (req: Request): boolean => /^\s*multipart\/form-data\s*;/i.test(String(req.headers['content-type'] ?? ''));

/**
 * Reads a multipart body within the limits above: the text parts into `req.body` (a plain
 * object; the file's part as an empty string), the file for `uploadedFile`. A limit broken
 * answers its ApiError; the text parts read before it stay in `req.body`. Also the Portal's
 * one step for its forms that take a file (portal/portal-uploads.ts).
 */
export const readMultipart = (req: Request, res: Response, next: (error?: ApiError) => void): void => {
  parse(req, res, (error?: unknown) => {
    // multer makes a body with no prototype; the validator and routes expect a plain object.
    const body: Record<string, unknown> = { ...(req.body as Record<string, unknown>) };
    for (const file of (req.files as Express.Multer.File[] | undefined) ?? []) body[file.fieldname] = '';
    req.body = body;
    next(error ? uploadError(error) : undefined);
  });
};

export const acceptUploads: RequestHandler = (req, res, next) => {
  if (!takesMultipart(req)) return next();
  readMultipart(req, res, next);
};

/** The file sent in the part `field`, as it arrived (unchecked). */
export function uploadedFile(req: Request, field = 'file'): { bytes: Buffer; declaredType: string; name: string } | undefined {
  const file = ((req.files as Express.Multer.File[] | undefined) ?? []).find((part) => part.fieldname === field);
  // The name is shown to people only; nothing is stored or served by it.
  return file ? { bytes: file.buffer, declaredType: file.mimetype, name: file.originalname } : undefined;
}
