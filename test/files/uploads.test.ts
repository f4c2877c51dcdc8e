/**
 * The storage port and the upload step every file-taking operation shares: bytes decide the
 * type, our names decide the path, and each limit broken is a 4xx in the spec's shape.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import express from 'express';
import { diskFileStore } from '../../server/files/disk-file-store';
import { FileNotFound } from '../../server/files/file-store';
import { checkFile, typeOfBytes } from '../../server/files/file-types';
import { MAX_UPLOAD_BYTES, uploadedFile } from '../../server/http/uploads';
import { openApiValidator } from '../../server/http/validator';
import { errorHandler } from '../../server/http/error-handler';
import { createLogger } from '../../server/kernel/logging';
import { listen } from '../../server/app';
import { ApiError } from '../../server/kernel/errors';

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]);
const SCRIPT = Buffer.from('<script>alert(1)</script>');

describe('the disk file store', () => {
  const store = diskFileStore(mkdtempSync(join(tmpdir(), 'dcs-store-')));

  test('keeps bytes under a name of its own and gives them back by that name only', async () => {
    const kept = await store.put(PDF, 'application/pdf');
    expect(kept).toEqual({ key: expect.stringMatching(/^[0-9a-f-]{36}$/), contentType: 'application/pdf', size: PDF.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await store.read(kept.key)).equals(PDF)).toBe(true);
    await store.remove(kept.key);
    await expect(store.read(kept.key)).rejects.toBeInstanceOf(FileNotFound);
    await store.remove(kept.key);
  });

  test('a name that is not one of ours reaches no file', async () => {
    for (const key of ['../data-encryption.key', '/etc/passwd', 'a', '', `${'0'.repeat(8)}-0000-4000-8000-000000000000/../x`]) {
      await expect(store.read(key)).rejects.toBeInstanceOf(FileNotFound);
    }
  });

  test('files are readable by the service alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dcs-store-mode-'));
    const kept = await diskFileStore(dir).put(PNG, 'image/png');
    expect(statSync(join(dir, 'files', kept.key.slice(0, 2), kept.key)).mode & 0o777).toBe(0o600);
  });
});

describe('the type of a file', () => {
  test('is read from its first bytes', () => {
    expect([PDF, PNG, JPEG, SCRIPT, Buffer.alloc(0)].map(typeOfBytes)).toEqual(['application/pdf', 'image/png', 'image/jpeg', undefined, undefined]);
  });

  const refusal = (run: () => unknown): { status: number; body: unknown } | undefined => {
    try {
      run();
      return undefined;
    } catch (error) {
      return error instanceof ApiError ? { status: error.status, body: error.body() } : undefined;
    }
  };

  test('a declared type we take, with bytes that say the same, is kept', () => {
    expect(checkFile({ bytes: PDF, declaredType: 'application/pdf' }, ['application/pdf'])).toBe('application/pdf');
    expect(checkFile({ bytes: JPEG, declaredType: 'IMAGE/JPEG; name=x' }, ['application/pdf', 'image/jpeg'])).toBe('image/jpeg');
  });

  test('a type we do not take is 415, bytes that lie or nothing at all 422 on the field', () => {
    expect(refusal(() => checkFile({ bytes: SCRIPT, declaredType: 'text/html' }, ['application/pdf']))).toMatchObject({ status: 415, body: { errorCode: 'unsupported_media_type' } });
    expect(refusal(() => checkFile({ bytes: PNG, declaredType: 'image/png' }, ['application/pdf']))?.status).toBe(415);
    expect(refusal(() => checkFile({ bytes: SCRIPT, declaredType: 'application/pdf' }, ['application/pdf']))).toEqual({
      status: 422,
      body: { error: 'The given data was invalid.', errorCode: 'validation_failed', errors: { file: ['is not a PDF: its content does not match its declared type application/pdf'] } },
    });
    expect(refusal(() => checkFile({ bytes: PNG, declaredType: 'image/jpeg' }, ['image/jpeg', 'image/png']))?.status).toBe(422);
    expect(refusal(() => checkFile({ bytes: Buffer.alloc(0), declaredType: 'application/pdf' }, ['application/pdf']))).toMatchObject({ status: 422, body: { errors: { file: ['is empty'] } } });
  });
});

describe('the upload step', () => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'uploads', version: '1' },
    paths: {
      '/files': {
        post: {
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: { type: 'object', required: ['file', 'name'], additionalProperties: false, properties: { file: { type: 'string', format: 'binary' }, name: { type: 'string', minLength: 1, maxLength: 255 } } },
              },
            },
          },
          responses: { '201': { description: 'kept', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
  };
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = express();
    app.use(openApiValidator(document as never, { responses: false }));
    app.post('/files', (req, res) => {
      const file = uploadedFile(req);
      res.status(201).json({ size: file?.bytes.length, declared: file?.declaredType, name: (req.body as { name: string }).name });
    });
    app.use(errorHandler(createLogger('silent')));
    server = await listen(app, 0, '127.0.0.1');
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const send = async (parts: { file?: Buffer[]; name?: string }) => {
    const form = new FormData();
    for (const bytes of parts.file ?? []) form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'statement.pdf');
    if (parts.name !== undefined) form.append('name', parts.name);
    const response = await fetch(`${base}/files`, { method: 'POST', body: form });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test('a file of exactly 10 MB is taken, with the form fields checked by the document', async () => {
    expect(await send({ file: [Buffer.alloc(MAX_UPLOAD_BYTES, 0x25)], name: 'Statement' })).toEqual({ status: 201, body: { size: MAX_UPLOAD_BYTES, declared: 'application/pdf', name: 'Statement' } });
  });

  test('one byte more is 413 in the spec shape', async () => {
    expect(await send({ file: [Buffer.alloc(MAX_UPLOAD_BYTES + 1)], name: 'Statement' })).toEqual({
      status: 413,
      body: { error: 'The file is larger than 10 MB (10485760 bytes).', errorCode: 'payload_too_large' },
    });
  });

  test('two files, a missing file or a field out of bounds are 422 on the field', async () => {
    expect(await send({ file: [PDF, PDF], name: 'x' })).toMatchObject({ status: 422, body: { errors: { file: ['only one file may be sent'] } } });
    expect(await send({ name: 'x' })).toMatchObject({ status: 422, body: { errorCode: 'validation_failed', errors: { file: ["must have required property 'file'"] } } });
    expect(await send({ file: [PDF], name: 'x'.repeat(256) })).toMatchObject({ status: 422, body: { errors: { name: ['must NOT have more than 255 characters'] } } });
  });

  test('a body that is not a readable form is 400, and the process answers the next one', async () => {
    const cut = await fetch(`${base}/files`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-' });
    expect({ status: cut.status, body: await cut.json() }).toEqual({ status: 400, body: { error: 'The multipart/form-data body could not be read.', errorCode: 'bad_request' } });
    expect((await send({ file: [PDF], name: 'after' })).status).toBe(201);
  });

  test('JSON sent to an operation that takes a form is 415', async () => {
    const response = await fetch(`${base}/files`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ errorCode: 'unsupported_media_type' });
  });
});
