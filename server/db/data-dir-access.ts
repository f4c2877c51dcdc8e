/**
 * As root, the embedded PostgreSQL runs as the `postgres` system user (PostgreSQL refuses to run
 * as root), so that user must be able to enter DATA_DIR and every folder above it. A folder made
 * by `mktemp -d` (mode 700, root's) cannot be entered: initdb failed, and only PostgreSQL's log
 * said why. The start now refuses such a DATA_DIR before initdb, in one sentence that names the
 * folder, its mode and owner, and the fix.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface SystemUser {
  uid: number;
  gid: number;
  /** Every group the user is in (its own among them). */
  groups: number[];
}

/** Whether `user` may enter (search) a folder of this mode and ownership. */
function mayEnter(stat: { mode: number; uid: number; gid: number }, user: SystemUser): boolean {
  if (stat.uid === user.uid) return (stat.mode & 0o100) !== 0;
  if (user.groups.includes(stat.gid) || stat.gid === user.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

function nameOf(kind: 'passwd' | 'group', id: number): string {
  try {
    return execFileSync('getent', [kind, String(id)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(':')[0] || String(id);
  } catch {
    return String(id);
  }
}

/**
 * The sentence refusing `dataDir` when `user` cannot enter it or a folder above it; undefined
 * when it can (the first folder that bars the way is named).
 */
export function dataDirRefusal(dataDir: string, user: SystemUser, userName = 'postgres'): string | undefined {
  const folders: string[] = [];
  for (let at = resolve(dataDir); ; at = dirname(at)) {
    folders.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const folder of folders) {
    const stat = statSync(folder);
    if (mayEnter(stat, user)) continue;
    const mode = (stat.mode & 0o7777).toString(8).padStart(3, '0');
    const owner = `${nameOf('passwd', stat.uid)}:${nameOf('group', stat.gid)}`;
    const where = folder === resolve(dataDir) ? `DATA_DIR ${folder}` : `${folder}, above DATA_DIR ${resolve(dataDir)},`;
    return (
      `${where} (mode ${mode}, owner ${owner}) cannot be entered by the \`${userName}\` user the embedded PostgreSQL runs as when started by root; ` +
      `let it in with \`chmod o+x ${folder}\` (or \`chown ${userName} ${folder}\`), or set DATA_DIR to a folder it can enter.`
    );
  }
  return undefined;
}

/** The groups of a system user, by name (`id -G`). */
export function groupsOf(name: string): number[] {
  try {
    return execFileSync('id', ['-G', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split(/\s+/).map(Number);
  } catch {
    return [];
  }
}
