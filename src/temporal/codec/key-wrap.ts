import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptionError } from './encryption-codec';
import type { CodecKey } from './keys';

// Wrapping a customer's data key under a master key of the deployment's keyring: AES-256-GCM
// with a random nonce, the customer, the key version and the master key id bound as associated
// data, so a wrapped key copied onto another customer's row, or relabelled, fails to unwrap.

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes of a data key: AES-256. */
export const DATA_KEY_BYTES = 32;
/** The prefix of every customer key id in a payload's metadata, as opposed to a master key id. */
export const CUSTOMER_KEY_PREFIX = 'cust:';

/** Which customer key a wrapped key is: the customer and the version. */
export interface CustomerKeyName {
  customerId: string;
  version: number;
}

/** The key id written into payloads encrypted under a customer's data key: `cust:<customerId>:<version>`. */
export function customerKeyId(name: CustomerKeyName): string {
  return `${CUSTOMER_KEY_PREFIX}${name.customerId}:${name.version}`;
}

/** The customer and version a key id names, or undefined for a master (deployment) key id. */
export function parseCustomerKeyId(keyId: string): CustomerKeyName | undefined {
  if (!keyId.startsWith(CUSTOMER_KEY_PREFIX)) return undefined;
  // The version is after the last colon: a customer id may itself hold colons.
  const rest = keyId.slice(CUSTOMER_KEY_PREFIX.length);
  const colon = rest.lastIndexOf(':');
  const version = Number(rest.slice(colon + 1));
  if (colon < 1 || !Number.isInteger(version) || version < 1) throw new DecryptionError(`"${keyId}" is not a customer key id (cust:<customerId>:<version>)`);
  return { customerId: rest.slice(0, colon), version };
}

function associatedData(name: CustomerKeyName, masterId: string): Buffer {
  return Buffer.from(`casework-customer-key-v1\0${name.customerId}\0${name.version}\0${masterId}`);
}

/** A fresh random data key. */
export function newDataKey(): Buffer {
  return randomBytes(DATA_KEY_BYTES);
}

/** The data key of `name` wrapped under `master`: nonce ‖ ciphertext ‖ tag. */
export function wrapKey(dataKey: Buffer, name: CustomerKeyName, master: CodecKey): Buffer {
  if (dataKey.length !== DATA_KEY_BYTES) throw new DecryptionError(`a data key is ${DATA_KEY_BYTES} bytes, not ${dataKey.length}`);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', master.key, nonce);
  cipher.setAAD(associatedData(name, master.id));
  return Buffer.concat([nonce, cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
}

/** The data key of `name` from its wrapped form; DecryptionError when it was altered, moved or wrapped under another key. */
export function unwrapKey(wrapped: Buffer, name: CustomerKeyName, master: CodecKey): Buffer {
  if (wrapped.length !== NONCE_BYTES + DATA_KEY_BYTES + TAG_BYTES) {
    throw new DecryptionError(`the wrapped key of ${customerKeyId(name)} is ${wrapped.length} bytes, not ${NONCE_BYTES + DATA_KEY_BYTES + TAG_BYTES}`);
  }
  const decipher = createDecipheriv('aes-256-gcm', master.key, wrapped.subarray(0, NONCE_BYTES));
  decipher.setAAD(associatedData(name, master.id));
  decipher.setAuthTag(wrapped.subarray(NONCE_BYTES + DATA_KEY_BYTES));
  try {
    return Buffer.concat([decipher.update(wrapped.subarray(NONCE_BYTES, NONCE_BYTES + DATA_KEY_BYTES)), decipher.final()]);
  } catch {
    throw new DecryptionError(`the wrapped key of ${customerKeyId(name)} failed authentication under master key "${master.id}": it was altered or belongs to another customer`);
  }
}
