/**
 * Passwords of Portal accounts. Hashed with scrypt from Node's crypto at OWASP's parameters
 * (Password Storage Cheat Sheet: N=2^17, r=8, p=1), a 16-byte random salt and a 32-byte hash;
 * the parameters are stored with each hash so they can be raised later without a migration.
 * A password is at least 12 characters (NIST SP 800-63B 3.1.1.2 asks for 8 at least, and to
 * refuse known-compromised ones), at most 128, and not on the list of common passwords shipped
 * beside this file.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 128;

/** OWASP's cost, the default of `config.passwordScryptLog2N` (tests pass a lower one). */
export const LOG2_N = 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** scrypt needs 128·N·r bytes (128 MiB here); Node's default cap is 32 MiB. */
const maxmemFor = (log2n: number, r: number) => 128 * 2 ** log2n * r + 16 * 1024 * 1024;

const COMMON: ReadonlySet<string> = new Set(
  readFileSync(join(__dirname, 'common-passwords.txt'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#')),
);

/** Why `password` cannot be used, or undefined when it can. */
export function passwordProblem(password: string): string | undefined {
  // Characters as a person counts them (an emoji is one), not UTF-16 units.
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (length > MAX_PASSWORD_LENGTH) return `Use at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (COMMON.has(password.toLowerCase())) return 'This password is too common. Choose one that is harder to guess.';
  return undefined;
}

function derive(password: string, salt: Buffer, log2n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** log2n, r, p, maxmem: maxmemFor(log2n, r) };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string, log2n = LOG2_N): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, log2n, R, P);
  return ['scrypt', log2n, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const [scheme, log2n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), Number(log2n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of no one's password (one per cost): an unknown e-mail is checked against it, so it costs what a known one does. */
const dummies = new Map<number, Promise<string>>();
export async function passwordMatchesNobody(password: string, log2n = LOG2_N): Promise<false> {
  let dummy = dummies.get(log2n);
  if (!dummy) dummies.set(log2n, (dummy = hashPassword(randomBytes(18).toString('base64'), log2n)));
  await passwordMatches(password, await dummy);
  return false;
}
