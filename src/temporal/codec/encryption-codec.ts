import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec, type SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CaseworkError, NotFoundError } from '../../errors';
import type { CodecKey, Keyring } from './keys';

/** The `encoding` metadata of an encrypted payload (as in Temporal's encryption samples). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata key naming the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';
/**
 * The metadata key naming the workflow a payload belongs to, in clear (history shows workflow
 * ids in clear anyway) and bound as associated data, so a payload cannot be relabelled to
 * another workflow. The codec server reads it to find that workflow's transcript log when it
 * expands a reference for display (docs/payload-privacy.md, "Decoding for display").
 */
export const WORKFLOW_ID_METADATA = 'workflow-id';

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

/** True for a payload this codec's kind encrypted (its `encoding` metadata says so). */
export function isEncrypted(payload: Payload): boolean {
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

  /** Encrypts each payload; the SDK's serialization context names the workflow it belongs to, written beside the key id. */
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const workflowId = context?.workflowId || undefined;
    return payloads.map((payload) => this.encrypt(payload, workflowId));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.decrypt(payload) : payload));
  }

  /** Encrypts one payload with the newest key, labelled with the workflow it belongs to when one is given. */
  encrypt(payload: Payload, workflowId?: string): Payload {
    const { id, key } = this.keyring.current;
    const plain = PayloadProto.encode(payload).finish();
    const nonce = this.nonceMode === 'derived' ? this.derivedNonce(this.keyring.current, plain, workflowId) : randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(associatedData(id, workflowId));
    const body = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8.encode(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: utf8.encode(id),
        ...(workflowId !== undefined ? { [WORKFLOW_ID_METADATA]: utf8.encode(workflowId) } : {}),
      },
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
    decipher.setAAD(associatedData(id, workflowIdOf(payload)));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new DecryptionError(`encrypted payload under key "${id}" failed authentication: it was altered, or the key of that id is not the one that encrypted it`);
    }
    return PayloadProto.decode(plain);
  }

  private derivedNonce(entry: CodecKey, plain: Uint8Array, workflowId: string | undefined): Buffer {
    let nonceKey = this.nonceKeys.get(entry.id);
    if (!nonceKey) {
      // A separate key for the nonce PRF, so the encryption key is never used for two purposes.
      nonceKey = Buffer.from(hkdfSync('sha256', entry.key, Buffer.alloc(0), 'casework payload nonce v1', 32));
      this.nonceKeys.set(entry.id, nonceKey);
    }
    // The label is part of what the nonce is derived from: equal payloads of two workflows differ
    // in associated data, and under one nonce that would give away the authentication key.
    const mac = createHmac('sha256', nonceKey);
    if (workflowId !== undefined) mac.update(`workflow-id\0${workflowId}\0`);
    return mac.update(plain).digest().subarray(0, NONCE_BYTES);
  }
}

/** The key id an encrypted payload names in clear, if any (read without copying the bytes). */
export function keyIdOf(payload: Payload): string | undefined {
  const raw = payload.metadata?.[KEY_ID_METADATA];
  return raw ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString() : undefined;
}

/** The workflow an encrypted payload is labelled with, if any. */
export function workflowIdOf(payload: Payload): string | undefined {
  const raw = payload.metadata?.[WORKFLOW_ID_METADATA];
  return raw ? Buffer.from(raw).toString() : undefined;
}

function associatedData(keyId: string, workflowId: string | undefined): Buffer {
  return Buffer.from(workflowId === undefined ? `casework-payload-v1:${keyId}` : `casework-payload-v1:${keyId}\0workflow-id:${workflowId}`);
}
