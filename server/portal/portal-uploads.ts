/**
 * The Portal's forms that take a file (the dispute forms): their multipart body is read by the
 * API's one multipart step (http/uploads.ts: one file of at most 10 MB, the same limits) before
 * the CSRF check, which then finds `_csrf` among the text parts (the forms put it first, so it
 * is read even when the file breaks a limit). A broken limit does not stop the request: the
 * page shows it on the form (`uploadErrorOf`), with what was typed, and nothing is recorded.
 * The file is checked by its first bytes where it is kept (files/file-types.ts `checkFile`).
 */
import type { Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { hashToken } from '../crypto/secrets';
import { isMultipart, readMultipart, uploadedFile } from '../http/uploads';
import { browserSessionRepo } from './browser-session-repo';
import { BROWSER_SESSION_COOKIE, readCookie } from './cookies';

const UPLOAD_ERROR = 'portalUploadError';

/**
 * Reads a multipart form of a browser session (no session: nothing is read, the page says the
 * session is gone); a limit it breaks is kept for the page to show.
 */
export function portalFileForm(deps: Pick<AppDeps, 'db'>): RequestHandler {
  return async (req, res, next) => {
    try {
      if (!isMultipart(req)) return next();
      const cookie = readCookie(req, BROWSER_SESSION_COOKIE);
      if (!cookie || !(await browserSessionRepo(deps.db).findByTokenHash(hashToken(cookie)))) return next();
      readMultipart(req, res, (error) => {
        if (error) res.locals[UPLOAD_ERROR] = error;
        next();
      });
    } catch (error) {
      next(error);
    }
  };
}

/** The form's file, when one was chosen (an empty file input sends no file). */
export function portalFile(req: Request): { bytes: Buffer; declaredType: string; name: string } | undefined {
  return uploadedFile(req);
}

/** The limit the form's body broke, if any. */
export function uploadErrorOf(res: Response): ApiError | undefined {
  return res.locals[UPLOAD_ERROR] as ApiError | undefined;
}

/**
 * What a person is told of a refused file, and the status of the page that says it: 413 too
 * large, 415 a type we do not take, 422 bytes that are not what the file claims (or none).
 * Undefined for an error that is not about the file.
 */
export function fileRefusal(error: unknown): { status: number; message: string } | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.errorCode === 'payload_too_large') {
    return { status: 413, message: /larger than 10 MB/.test(error.message) ? 'This file is larger than 10 MB. Choose a smaller file (a photo or a scan of the page is enough).' : 'The form could not be read. Reload the page and send it again.' };
  }
  if (error.errorCode === 'unsupported_media_type') return { status: 415, message: 'Attach a PDF, a PNG or a JPEG file. Other kinds of files are not accepted.' };
  const messages = error.fieldErrors?.file;
  if (error.status === 422 && messages) {
    if (messages.some((m) => /only one file/.test(m))) return { status: 422, message: 'Attach one file only.' };
    if (messages.some((m) => /is empty/.test(m))) return { status: 422, message: 'This file is empty. Choose the document again.' };
    return { status: 422, message: 'This file is not what its name says: its content is not a PDF, PNG or JPEG. Attach the document itself.' };
  }
  if (error.errorCode === 'bad_request') return { status: 400, message: 'The form could not be read. Reload the page and send it again.' };
  return undefined;
}
