import { StorageDriverClaim, type Payload, type StorageDriver, type StorageDriverStoreContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { z } from 'zod';
import { KEY_ID_METADATA } from '../codec/encryption-codec';
import type { CustomerKeys } from '../codec/customer-keys';
import { CUSTOMER_KEY_PREFIX } from '../codec/key-wrap';
import { claimedHash, fromBlob, SHA256_CLAIM, toBlob } from './blob';
import { MissingPayloadError } from './postgres-driver';

// An investigation's history by reference, under its customer's key (migrations/032): every
// payload of `investigation-<ticketId>` — the customer's messages (signals), the workflow input,
// activity inputs and results (tool previews, model replies), update arguments, failures, the
// carried state of a continuation — is replaced in history by a reference, and the payload
// (already encrypted under the deployment key) is stored encrypted again under the data key
// of the ticket's owner. Erasing the customer destroys that key: their histories keep their
// shape (every command, timer and id replays as recorded) but hold nothing anyone can read.

/** The driver name written into every reference it makes; changing it orphans them. */
export const CUSTOMER_DRIVER_NAME = 'casework-customer';

const PayloadProto = temporal.api.common.v1.Payload;
const Row = z.object({ sha256: z.string(), bytes: z.instanceof(Buffer) });
const BINARY = Buffer.from('binary/plain');
const isCustomerKeyId = (keyId: string) => keyId.startsWith(CUSTOMER_KEY_PREFIX);

/** The payload's bytes as the plaintext of one payload, so a customer's codec can encrypt them whole. */
function wrapped(payload: Payload): Payload {
  return { metadata: { encoding: BINARY }, data: toBlob(payload).bytes };
}

/**
 * Stores payloads of investigations in `customer_payloads`, under the ticket owner's data key;
 * an investigation with no owner recorded (started without the gate) keeps its payloads under
 * the deployment key, as they came. Retrieval follows the key id in the stored bytes, so an erased customer's payload
 * is a CustomerErasedError naming the date, never garbage.
 */
export class CustomerPayloadDriver implements StorageDriver {
  readonly name = CUSTOMER_DRIVER_NAME;
  readonly type = 'casework.customer';

  constructor(
    private readonly pool: Pool,
    private readonly keys: CustomerKeys,
  ) {}

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const workflowId = context.target?.kind === 'workflow' ? context.target.id : undefined;
    const customerId = workflowId ? await this.keys.customerOfWorkflow(workflowId) : undefined;
    // An investigation started without the gate (no owner recorded) keeps its payloads under the deployment key alone.
    const blobs = (customerId ? await (await this.keys.encoderFor(customerId)).encode(payloads.map(wrapped)) : payloads).map(toBlob);
    const distinct = [...new Map(blobs.map((b) => [b.sha256, b])).values()];
    await this.pool.query(
      `INSERT INTO customer_payloads (sha256, customer_id, bytes, size_bytes, workflow_id)
       SELECT s, $3, b, octet_length(b), $4 FROM unnest($1::text[], $2::bytea[]) AS t(s, b)
       ON CONFLICT (sha256) DO UPDATE SET last_stored_at = now()
         WHERE customer_payloads.last_stored_at < now() - interval '1 hour'`,
      [distinct.map((b) => b.sha256), distinct.map((b) => b.bytes), customerId ?? null, workflowId ?? null],
    );
    return blobs.map((b) => new StorageDriverClaim({ [SHA256_CLAIM]: b.sha256 }));
  }

  async retrieve(_context: unknown, claims: StorageDriverClaim[]): Promise<Payload[]> {
    const hashes = claims.map((c) => claimedHash(c.claimData, this.name));
    const { rows } = await this.pool.query('SELECT sha256, bytes FROM customer_payloads WHERE sha256 = ANY($1::text[])', [[...new Set(hashes)]]);
    const found = new Map(rows.map((row) => Row.parse(row)).map((r) => [r.sha256, r.bytes]));
    return Promise.all(
      hashes.map(async (hash) => {
        const bytes = found.get(hash);
        if (!bytes) throw new MissingPayloadError(`stored payload ${hash} is not in customer_payloads (removed by retention, or another database)`);
        const outer = fromBlob(hash, bytes, 'customer_payloads');
        const keyId = Buffer.from(outer.metadata?.[KEY_ID_METADATA] ?? []).toString();
        if (!isCustomerKeyId(keyId)) return outer;
        const [inner] = await (await this.keys.decoderFor(keyId)).decode([outer]);
        return PayloadProto.decode(inner!.data!);
      }),
    );
  }
}
