import { createHmac } from 'node:crypto';
import { randomToken } from './session';

// Customer ids never appear in a console URL (nor, with that, in logs or browser history): a
// page links to a customer by an opaque reference, a keyed hash of the id under this process's
// secret, which the server maps back. A reference from before a restart no longer resolves;
// the page then asks for the customer to be looked up again.

/** Most references remembered; the oldest go first. */
const MAX_REFS = 50_000;

/** Mints and resolves opaque customer references. */
export interface CustomerRefs {
  refOf(customerId: string): string;
  customerOf(ref: string): string | undefined;
}

/** References under a fresh random secret (or `secret`, for tests). */
export function customerRefs(secret: string = randomToken()): CustomerRefs {
  const known = new Map<string, string>();
  return {
    refOf(customerId) {
      const ref = `c_${createHmac('sha256', secret).update(customerId, 'utf8').digest('base64url').slice(0, 22)}`;
      if (!known.has(ref)) {
        if (known.size >= MAX_REFS) {
          const oldest = known.keys().next().value;
          if (oldest !== undefined) known.delete(oldest);
        }
        known.set(ref, customerId);
      }
      return ref;
    },
    customerOf: (ref) => known.get(ref),
  };
}
