/**
 * Secrets at rest. API tokens are kept as SHA-256 hashes (they are random, so no salt is
 * needed); ACH numbers and webhook secrets are encrypted with AES-256-GCM under the data key;
 * a card is known afterwards only by a keyed fingerprint (HMAC), never by its number.
 */
import { createCipheriv, createDecipheriv, createHmac, hash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Asked on every API request: the one-shot hash, without a Hash object to make and finish. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** A new API token: 32 random bytes, URL-safe, with a prefix naming its environment. */
export function newToken(environment: 'production' | 'sandbox'): string {
  return `${environment === 'production' ? 'dcs_live' : 'dcs_test'}_${randomBytes(32).toString('base64url')}`;
}

export class SecretBox {
  private readonly encryptionKey: Buffer;
  private readonly fingerprintKey: Buffer;
  private readonly requestKey: Buffer;
  private readonly masterKey: Buffer;
  private readonly macKeys = new Map<string, Buffer>();

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('The data encryption key must be 32 bytes');
    this.masterKey = Buffer.from(masterKey);
    this.encryptionKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'encryption', 32));
    this.fingerprintKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'fingerprint', 32));
    this.requestKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'request-fingerprint', 32));
  }

  /** `v1.<base64 iv>.<base64 tag>.<base64 ciphertext>` */
  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('Unknown sealed value format');
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
  }

  /**
   * A signature of `value` for one `purpose` (a signed link), base64url: each purpose has its
   * own key derived from the data key, so a signature made for one use is worthless in another.
   */
  mac(purpose: string, value: string): string {
    let key = this.macKeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.masterKey, Buffer.alloc(0), `mac:${purpose}`, 32));
      this.macKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(value, 'utf8').digest('base64url');
  }

  /** Same input, same fingerprint, under this key only: finds a card again without keeping its number. */
  fingerprint(value: string): string {
    return createHmac('sha256', this.fingerprintKey).update(value, 'utf8').digest('hex');
  }

  /**
   * A request's fingerprint (idempotency): under its own key, so that nothing stored lets
   * anyone test a guess of what the request held without the key.
   */
  requestDigest(value: string): string {
    return createHmac('sha256', this.requestKey).update(value, 'utf8').digest('hex');
  }
}

/**
 * The key from DATA_ENCRYPTION_KEY (base64 of 32 bytes), or else the one kept in
 * `<dataDir>/data-encryption.key`, made on first use. Every process sharing a database must
 * use the same key.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('DATA_ENCRYPTION_KEY must be base64 of exactly 32 bytes');
    return key;
  }
  const file = join(dataDir, 'data-encryption.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
    } catch (error) {
      // Another process made it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  chmodSync(file, 0o600);
  return loadMasterKey(readFileSync(file, 'utf8').trim(), dataDir);
}
