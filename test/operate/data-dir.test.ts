/**
 * A clear start: as root, the embedded PostgreSQL runs as the `postgres` user, and a DATA_DIR
 * that user cannot enter (made by `mktemp -d`: mode 700, root's) is refused before initdb, with
 * one sentence naming the folder, its mode and owner, and the fix.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDirRefusal, groupsOf } from '../../server/db/data-dir-access';
import { embeddedEnv, spawnServer } from '../support/processes';

const made: string[] = [];
afterAll(() => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
});

const scratch = () => {
  const folder = mkdtempSync(join(tmpdir(), 'dcs-data-'));
  made.push(folder);
  return folder;
};

test('npm start as root on a DATA_DIR made by mktemp -d: refused before initdb, naming the folder, its mode and owner, and the fix', async () => {
  expect(process.getuid?.()).toBe(0); // these operating tests run as root, as the issue met it
  const dataDir = scratch();
  const server = spawnServer(embeddedEnv(dataDir, { PORT: '0' }));
  expect(await server.exited).toBe(1);
  expect(server.output()).toBe(
    `Could not start: DATA_DIR ${dataDir} (mode 700, owner root:root) cannot be entered by the \`postgres\` user the embedded PostgreSQL runs as when started by root; ` +
      `let it in with \`chmod o+x ${dataDir}\` (or \`chown postgres ${dataDir}\`), or set DATA_DIR to a folder it can enter.\n`,
  );
  // Nothing was initialised: no cluster, no scratch of initdb, no PostgreSQL log.
  expect(readdirSync(dataDir).filter((name) => name.startsWith('pg') || name === 'postgres.log')).toEqual([]);
}, 120_000);

test('the first folder that bars the way is named, an ancestor too; one the user may enter is not', () => {
  const postgres = { uid: 101_001, gid: 101_001, groups: [101_001] };
  const top = scratch();
  const dataDir = join(top, 'service', 'data');
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  chmodSync(top, 0o700);
  expect(dataDirRefusal(dataDir, postgres)).toMatch(new RegExp(`^${top}, above DATA_DIR ${dataDir}, \\(mode 700, owner [^)]+\\) cannot be entered by the \`postgres\` user`));
  chmodSync(top, 0o711);
  expect(dataDirRefusal(dataDir, postgres)).toBeUndefined();
  chmodSync(dataDir, 0o750);
  expect(dataDirRefusal(dataDir, postgres)).toMatch(new RegExp(`^DATA_DIR ${dataDir} \\(mode 750,`));
  // A member of the folder's group may enter by the group's bit.
  expect(dataDirRefusal(dataDir, { ...postgres, groups: [...postgres.groups, ...groupsOf('root')] })).toBeUndefined();
  expect(existsSync(dataDir)).toBe(true);
});
