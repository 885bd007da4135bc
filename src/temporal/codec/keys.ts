import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../../config';
import { BadInputError, RefusedError } from '../../errors';

/** One AES-256 key and the id written into every payload it encrypts. */
export interface CodecKey {
  id: string;
  key: Buffer;
}

/** The keys a process can decrypt with; `current` (the newest) encrypts every new payload. */
export interface Keyring {
  current: CodecKey;
  byId: ReadonlyMap<string, CodecKey>;
  /** Where the keys came from, for start-up logs: never the keys themselves. */
  source: 'environment' | 'file' | 'dev-key';
}

/** A key list casework cannot use; the message names the entry, never the key material. */
export class CodecKeyError extends BadInputError {}

/** No key is configured while production mode demands one. */
export class EncryptionRequiredError extends RefusedError {}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The file a generated development key lives in, under the git-ignored data folder. */
export function devKeyPath(config: Pick<Config, 'CASEWORK_DATA_DIR'>): string {
  return join(resolve(config.CASEWORK_DATA_DIR), 'codec-dev-key');
}

/** Parses "id:base64key" entries separated by commas or new lines ("#" comments), oldest first. */
export function parseKeys(text: string, where: string): CodecKey[] {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .flatMap((line) => line.split(','))
    .map((entry) => entry.trim())
    .filter(Boolean);
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    if (!KEY_ID.test(id)) throw new CodecKeyError(`${where}: entry ${index + 1} must be "id:base64key" with an id of letters, digits, ".", "_" or "-"`);
    if (seen.has(id)) throw new CodecKeyError(`${where}: key id "${id}" appears twice`);
    seen.add(id);
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== 32) throw new CodecKeyError(`${where}: key "${id}" is ${key.length} bytes; AES-256 needs 32 (openssl rand -base64 32)`);
    return { id, key };
  });
}

/** A keyring from keys listed oldest first. */
export function keyringOf(keys: CodecKey[], source: Keyring['source']): Keyring {
  if (keys.length === 0) throw new CodecKeyError('no payload encryption key given');
  return { current: keys[keys.length - 1]!, byId: new Map(keys.map((k) => [k.id, k])), source };
}

/** True when casework must not run without a configured key: NODE_ENV=production or CASEWORK_REQUIRE_ENCRYPTION=true. */
export function productionMode(config: Pick<Config, 'NODE_ENV' | 'CASEWORK_REQUIRE_ENCRYPTION'>): boolean {
  return config.NODE_ENV === 'production' || config.CASEWORK_REQUIRE_ENCRYPTION === 'true';
}

/** Generates a key and writes it, readable by this user only; returns the file's text. */
function writeDevKey(path: string): string {
  const key = randomBytes(32);
  // The id carries a fingerprint so two machines' dev keys are told apart in a payload's metadata.
  const id = `dev-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
  const text = `# casework development payload key, generated ${new Date().toISOString()}. Not for production.\n${id}:${key.toString('base64')}\n`;
  mkdirSync(dirname(path), { recursive: true });
  // Written aside and linked into place, so a process starting at the same moment sees either
  // no file or the whole key, never an empty one; link fails with EEXIST when another won.
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, text, { mode: 0o600 });
  try {
    chmodSync(aside, 0o600);
    linkSync(aside, path);
  } finally {
    rmSync(aside, { force: true });
  }
  return text;
}

/**
 * The keys from CASEWORK_CODEC_KEYS, else CASEWORK_CODEC_KEY_FILE, else (outside production
 * mode only) a development key generated once into the data folder, so the demo and tests
 * encrypt too. In production mode a missing key refuses to start.
 */
export function loadKeyring(config: Pick<Config, 'CASEWORK_CODEC_KEYS' | 'CASEWORK_CODEC_KEY_FILE' | 'CASEWORK_DATA_DIR' | 'NODE_ENV' | 'CASEWORK_REQUIRE_ENCRYPTION'>): Keyring {
  if (config.CASEWORK_CODEC_KEYS) return keyringOf(parseKeys(config.CASEWORK_CODEC_KEYS, 'CASEWORK_CODEC_KEYS'), 'environment');
  if (config.CASEWORK_CODEC_KEY_FILE) {
    let text: string;
    try {
      text = readFileSync(config.CASEWORK_CODEC_KEY_FILE, 'utf8');
    } catch (error) {
      throw new CodecKeyError(`CASEWORK_CODEC_KEY_FILE=${config.CASEWORK_CODEC_KEY_FILE} cannot be read: ${(error as Error).message}`);
    }
    return keyringOf(parseKeys(text, config.CASEWORK_CODEC_KEY_FILE), 'file');
  }
  if (productionMode(config)) {
    throw new EncryptionRequiredError(
      'production mode (NODE_ENV=production or CASEWORK_REQUIRE_ENCRYPTION=true) needs a payload encryption key: ' +
        'set CASEWORK_CODEC_KEYS="id:$(openssl rand -base64 32)" or CASEWORK_CODEC_KEY_FILE',
    );
  }
  const path = devKeyPath(config);
  let text: string;
  try {
    text = existsSync(path) ? readFileSync(path, 'utf8') : writeDevKey(path);
  } catch (error) {
    // Two processes starting at once: the other one wrote it first.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    text = readFileSync(path, 'utf8');
  }
  return keyringOf(parseKeys(text, path), 'dev-key');
}
