/** HTTP exactly as written: no URL normalization, any Host, any body bytes (fetch allows none of these). */
import { request as httpRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  type: string;
  text: string;
  body: { error?: unknown; errorCode?: unknown; errors?: unknown };
  headers: Record<string, string | string[] | undefined>;
}

export interface RawRequest {
  method: string;
  /** Sent as is: percent-encode it yourself. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export function rawRequest(origin: string, { method, path, headers = {}, body }: RawRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: RawAnswer['body'] = {};
        try {
          parsed = JSON.parse(text) as RawAnswer['body'];
        } catch {
          // not JSON: the caller's assertions say so
        }
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text, body: parsed, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What every 4xx and 5xx must be: JSON `{error, errorCode}` (and `errors`, field to messages, on a 422), no HTML, no stack. */
export function errorShapeProblem(answer: RawAnswer): string | undefined {
  if (!answer.type.includes('application/json')) return `content-type ${answer.type || 'none'}`;
  if (/<html|\bat .*\.[jt]s:\d+/i.test(answer.text)) return 'an HTML page or a stack trace';
  const { error, errorCode, errors } = answer.body;
  if (typeof error !== 'string' || typeof errorCode !== 'string') return `not the error shape: ${answer.text.slice(0, 200)}`;
  if (answer.status === 422) {
    if (typeof errors !== 'object' || errors === null) return 'a 422 without errors';
    for (const messages of Object.values(errors)) {
      if (!Array.isArray(messages) || messages.some((message) => typeof message !== 'string')) return `errors not lists of strings: ${answer.text.slice(0, 200)}`;
    }
  }
  return undefined;
}
