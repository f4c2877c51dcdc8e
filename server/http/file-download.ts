/**
 * How a stored file leaves the service: the type we stored (never one the upload claimed), a
 * file name of ours, no sniffing, and a Content-Security-Policy under which nothing runs, so a
 * file that somehow holds markup is never a page of ours. `attachment` for downloads; `inline`
 * only where a page of ours chose to show a PDF in the browser's own viewer.
 */
import type { Response } from 'express';

export function sendStoredFile(
  res: Response,
  file: { bytes: Buffer; contentType: string },
  filename: string,
  disposition: 'attachment' | 'inline' = 'attachment',
  /** The caller's own policy, which must run no script (a self-contained HTML page may allow its inline style). */
  csp = "default-src 'none'; sandbox",
): void {
  res.set({
    'Content-Type': file.contentType,
    'Content-Length': String(file.bytes.length),
    'Content-Disposition': `${disposition}; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': csp,
    'Cache-Control': 'private, no-store',
  });
  res.status(200).end(file.bytes);
}
