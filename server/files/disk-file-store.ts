/**
 * The built-in file store: `<DATA_DIR>/files/<first two characters of the key>/<key>`, written
 * to a temporary name, flushed and renamed, so a crash leaves either the whole file or none.
 * Files are readable by the service's user only (mode 600). Every process over one database
 * must share the folder (one machine, or a shared volume), as they share the data key.
 */
import { randomUUID, createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FileNotFound, type FileStore, type StoredFile } from './file-store';
import type { FileType } from './file-types';

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function diskFileStore(dataDir: string): FileStore {
  const root = join(dataDir, 'files');
  const pathOf = (key: string): string => {
    // Only a key of ours names a path: nothing a client sends can reach another file.
    if (!KEY.test(key)) throw new FileNotFound(key);
    return join(root, key.slice(0, 2), key);
  };

  return {
    async put(bytes: Buffer, contentType: FileType): Promise<StoredFile> {
      const key = randomUUID();
      const path = pathOf(key);
      await mkdir(join(root, key.slice(0, 2)), { recursive: true, mode: 0o700 });
      const temporary = `${path}.partial`;
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, path);
      return { key, contentType, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    },

    async read(key: string): Promise<Buffer> {
      try {
        return await readFile(pathOf(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new FileNotFound(key);
        throw error;
      }
    },

    async remove(key: string): Promise<void> {
      await rm(pathOf(key), { force: true });
    },
  };
}
