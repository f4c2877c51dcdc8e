/**
 * The one way the service keeps files (dispute evidence, documents to read or sign, ticket
 * attachments). A file is named by us (a random key), never by the upload's name, and is read
 * back only by a key some row of ours holds: nothing is ever served by a path a client chose.
 * The built-in implementation keeps them on the local disk under `DATA_DIR`
 * (disk-file-store.ts); another store (an object store) plugs in behind the same interface.
 *
 * A file is written before the row that names it is committed: a failed or crashed transaction
 * leaves at most an unnamed file, which nothing can serve, never a row without its file.
 */
import type { FileType } from './file-types';

export interface StoredFile {
  /** Ours: a random UUID. */
  key: string;
  contentType: FileType;
  /** Bytes. */
  size: number;
  /** SHA-256 of the bytes, hex: what a signature or an audit names. */
  sha256: string;
}

export interface FileStore {
  /** Keeps the bytes (already checked by `checkFile`) and answers their new name. */
  put(bytes: Buffer, contentType: FileType): Promise<StoredFile>;
  /** The bytes of a key `put` answered; a `FileNotFound` for any other. */
  read(key: string): Promise<Buffer>;
  /** Forgets a file (its row is gone); a key already gone is not an error. */
  remove(key: string): Promise<void>;
}

export class FileNotFound extends Error {
  constructor(key: string) {
    super(`No stored file ${JSON.stringify(key)}.`);
  }
}
