import type { Payload, SerializationContext } from '@temporalio/common';
import { investigationId } from '../../schemas/event';
import type { CustomerKeys } from './customer-keys';
import { EncryptionCodec, isEncrypted, keyIdOf, type NonceMode } from './encryption-codec';
import { CUSTOMER_KEY_PREFIX } from './key-wrap';
import type { Keyring } from './keys';

// CASEWORK_CUSTOMER_PAYLOADS=inline (opt-in, evaluated beside the store; docs/payload-privacy.md):
// every payload of an investigation `investigation-<ticketId>` is encrypted in history under
// its customer's data key directly, the codec learning whose it is from the SDK's serialization
// context (the workflow id) and the ticket's owner. No storage rows: a workflow task reads and
// writes no Postgres once the customer's key is cached, and keys are served stale while Postgres
// cannot be reached (CustomerKeys' staleIfError), so an outage does not stall cases whose keys
// this process holds. Erasure destroys the key, which reaches the history as the store does.

const PREFIX = investigationId('');

/** The encryption codec, with an investigation's payloads under its customer's key; others, and payloads of a ticket with no owner, under the deployment key. */
export class CustomerInlineCodec extends EncryptionCodec {
  constructor(
    keyring: Keyring,
    nonceMode: NonceMode,
    private readonly keys: CustomerKeys,
  ) {
    super(keyring, nonceMode);
  }

  override async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const workflowId = context?.workflowId;
    if (!workflowId?.startsWith(PREFIX)) return super.encode(payloads, context);
    // Awaiting only what this process has not cached: a task completion costs what it costs under the deployment key.
    const customerId = this.keys.cachedOwner(workflowId) ?? (await this.keys.customerOfWorkflow(workflowId));
    if (!customerId) return super.encode(payloads, context);
    return (this.keys.cachedEncoder(customerId) ?? (await this.keys.encoderFor(customerId))).encode(payloads, context);
  }

  override async decode(payloads: Payload[]): Promise<Payload[]> {
    // One pass, awaiting only a key this process has not cached: reading a history costs what it
    // costs under the deployment key (scripts/bench-erasure.ts prices the two side by side).
    const decoded: Payload[] = [];
    for (const payload of payloads) {
      const keyId = keyIdOf(payload);
      if (!keyId?.startsWith(CUSTOMER_KEY_PREFIX)) decoded.push(isEncrypted(payload) ? this.decrypt(payload) : payload);
      else decoded.push((this.keys.cachedDecoder(keyId) ?? (await this.keys.decoderFor(keyId))).decrypt(payload));
    }
    return decoded;
  }
}
