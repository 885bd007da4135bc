import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ConsoleSecrets } from './secrets';

// Customer ids never appear in a console URL (nor, with that, in logs or browser history): a
// page links to a customer by an opaque reference, the id encrypted and authenticated
// (AES-256-GCM) under the console's key. Any replica holding the same payload keys opens a
// reference another one made, with nothing stored: a table of references would be one more
// copy of customer ids for an erasure to reach. A reference names the key generation that
// made it, so one made before a key rotation opens until that key leaves the keyring; a
// forged or altered one fails its tag and is answered as unknown.

/** What a reference's authenticated data starts with, so no other ciphertext under the key passes as one. */
const PURPOSE = 'casework console customer ref';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The shape of a reference in a URL: "c_" and base64url. */
export const REF_SHAPE = /^c_[A-Za-z0-9_-]{40,600}$/;

/** Mints and resolves opaque customer references. */
export interface CustomerRefs {
  refOf(customerId: string): string;
  customerOf(ref: string): string | undefined;
}

/** References under the console's keys. */
export function customerRefs(secrets: ConsoleSecrets): CustomerRefs {
  return {
    refOf(customerId) {
      const { id, refs } = secrets.current;
      const kid = Buffer.from(id, 'utf8');
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', refs, iv).setAAD(Buffer.from(`${PURPOSE}:${id}`, 'utf8'));
      const sealed = Buffer.concat([cipher.update(customerId, 'utf8'), cipher.final()]);
      return `c_${Buffer.concat([Buffer.from([kid.length]), kid, iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
    },
    customerOf(ref) {
      if (!REF_SHAPE.test(ref)) return undefined;
      const bytes = Buffer.from(ref.slice(2), 'base64url');
      const kidLength = bytes[0] ?? 0;
      const id = bytes.subarray(1, 1 + kidLength).toString('utf8');
      const key = secrets.byId.get(id);
      const at = 1 + kidLength;
      if (!key || bytes.length <= at + IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.refs, bytes.subarray(at, at + IV_BYTES))
          .setAAD(Buffer.from(`${PURPOSE}:${id}`, 'utf8'))
          .setAuthTag(bytes.subarray(at + IV_BYTES, at + IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(at + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        // The tag did not match: altered, forged, or made under a key this replica does not hold.
        return undefined;
      }
    },
  };
}
