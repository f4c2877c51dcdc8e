/**
 * Which files the service takes, known by their first bytes: a declared Content-Type is a
 * claim, the bytes are the fact. A type we do not take is a 415; bytes that are not what the
 * upload claims are a 422 on its field, so a script renamed `.pdf` never reaches a person's
 * browser as a PDF.
 */
import { ApiError } from '../kernel/errors';

export const FILE_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type FileType = (typeof FILE_TYPES)[number];

/** The signature each type's bytes begin with (PDF 1.7 §7.5.2, PNG §5.2, JPEG's SOI + a marker). */
const SIGNATURES: Record<FileType, Buffer> = {
  'application/pdf': Buffer.from('%PDF-', 'latin1'),
  'image/png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/jpeg': Buffer.from([0xff, 0xd8, 0xff]),
};

const NAMES: Record<FileType, string> = { 'application/pdf': 'a PDF', 'image/png': 'a PNG image', 'image/jpeg': 'a JPEG image' };

/** What the bytes are, of the types we take; undefined for anything else. */
export function typeOfBytes(bytes: Buffer): FileType | undefined {
  return FILE_TYPES.find((type) => bytes.subarray(0, SIGNATURES[type].length).equals(SIGNATURES[type]));
}

/** A file as it arrived: its bytes and the type its part declared. */
export interface Upload {
  bytes: Buffer;
  declaredType: string;
}

/**
 * The type of an upload that may be kept, or the error to answer: 415 when the declared type
 * is not one of `allowed`, 422 on `field` when the file is empty or its bytes are not that type.
 */
export function checkFile(upload: Upload, allowed: readonly FileType[], field = 'file'): FileType {
  const declared = upload.declaredType.split(';')[0]!.trim().toLowerCase() as FileType;
  const names = allowed.map((type) => NAMES[type]).join(' or ');
  if (!allowed.includes(declared)) {
    throw new ApiError('unsupported_media_type', `The ${field} must be ${names} (${allowed.join(', ')}), not ${JSON.stringify(upload.declaredType || 'untyped')}.`);
  }
  if (upload.bytes.length === 0) throw ApiError.field(field, 'is empty');
  if (typeOfBytes(upload.bytes) !== declared) throw ApiError.field(field, `is not ${NAMES[declared]}: its content does not match its declared type ${declared}`);
  return declared;
}
