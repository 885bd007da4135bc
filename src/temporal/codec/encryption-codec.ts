import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CaseworkError, NotFoundError } from '../../errors';
import type { CodecKey, Keyring } from './keys';

/** The `encoding` metadata of an encrypted payload (as in Temporal's encryption samples). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata key naming the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';

const PayloadProto = temporal.api.common.v1.Payload;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();

/** A payload names a key id this process does not hold. */
export class UnknownKeyError extends NotFoundError {}

/** An encrypted payload that fails to decrypt: altered, truncated or under another key of the same id. */
export class DecryptionError extends CaseworkError {
  constructor(message: string) {
    super('bad_input', message);
  }
}

/** How the 96-bit GCM nonce is chosen: derived from the payload (deterministic) or random. */
export type NonceMode = 'derived' | 'random';

function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && Buffer.from(encoding).toString() === ENCRYPTED_ENCODING;
}

/**
 * AES-256-GCM over the whole serialized payload (data and metadata, so even the original
 * encoding is hidden). The result carries the key id in clear metadata; its data is
 * nonce ‖ ciphertext ‖ tag, and the key id is bound as associated data so relabelling fails.
 *
 * With `derived` nonces (the default) the nonce is HMAC-SHA256 of the plaintext under a key
 * derived from the encryption key: equal payloads give equal ciphertext, so a retried task
 * stores the same content-addressed blob instead of a second one. This reveals only that two
 * payloads are equal; distinct payloads collide on a nonce no more often than random ones.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly nonceKeys = new Map<string, Buffer>();

  constructor(
    /** The master keys: per-customer data keys are wrapped under them (customer-keys.ts). */
    readonly keyring: Keyring,
    /** How nonces are chosen, shared by the customer keys' codecs. */
    readonly nonceMode: NonceMode = 'derived',
  ) {}

  /** The key id new payloads are encrypted with. */
  get currentKeyId(): string {
    return this.keyring.current.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.decrypt(payload) : payload));
  }

  /** Encrypts one payload with the newest key. */
  encrypt(payload: Payload): Payload {
    const { id, key } = this.keyring.current;
    const plain = PayloadProto.encode(payload).finish();
    const nonce = this.nonceMode === 'derived' ? this.derivedNonce(this.keyring.current, plain) : randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(associatedData(id));
    const body = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { [METADATA_ENCODING_KEY]: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(id) },
      data: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    };
  }

  /** Decrypts one encrypted payload with the key its metadata names. */
  decrypt(payload: Payload): Payload {
    const raw = payload.metadata?.[KEY_ID_METADATA];
    if (!raw) throw new DecryptionError(`an encrypted payload has no ${KEY_ID_METADATA} metadata`);
    const id = Buffer.from(raw).toString();
    const entry = this.keyring.byId.get(id);
    if (!entry) {
      throw new UnknownKeyError(
        `payload was encrypted with key id "${id}", which this process does not have (it has: ${[...this.keyring.byId.keys()].join(', ')}); ` +
          'add that key to CASEWORK_CODEC_KEYS or CASEWORK_CODEC_KEY_FILE (old keys stay listed after a rotation)',
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < NONCE_BYTES + TAG_BYTES) throw new DecryptionError(`encrypted payload under key "${id}" is too short (${data.length} bytes)`);
    const decipher = createDecipheriv('aes-256-gcm', entry.key, data.subarray(0, NONCE_BYTES));
    decipher.setAAD(associatedData(id));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new DecryptionError(`encrypted payload under key "${id}" failed authentication: it was altered, or the key of that id is not the one that encrypted it`);
    }
    return PayloadProto.decode(plain);
  }

  private derivedNonce(entry: CodecKey, plain: Uint8Array): Buffer {
    let nonceKey = this.nonceKeys.get(entry.id);
    if (!nonceKey) {
      // A separate key for the nonce PRF, so the encryption key is never used for two purposes.
      nonceKey = Buffer.from(hkdfSync('sha256', entry.key, Buffer.alloc(0), 'casework payload nonce v1', 32));
      this.nonceKeys.set(entry.id, nonceKey);
    }
    return createHmac('sha256', nonceKey).update(plain).digest().subarray(0, NONCE_BYTES);
  }
}

function associatedData(keyId: string): Buffer {
  return Buffer.from(`casework-payload-v1:${keyId}`);
}
