import { StorageDriverClaim, type Payload, type StorageDriver, type StorageDriverRetrieveContext, type StorageDriverStoreContext } from '@temporalio/common';
import type { Pool } from 'pg';
import { z } from 'zod';
import { NotFoundError } from '../../errors';
import { claimedHash, fromBlob, SHA256_CLAIM, toBlob } from './blob';

/** The driver name written into every reference; changing it orphans stored references. */
export const POSTGRES_DRIVER_NAME = 'casework-postgres';

const BlobRow = z.object({ sha256: z.string(), bytes: z.instanceof(Buffer) });

/** A reference names a blob that is not in payload_blobs (deleted by retention, or another database). */
export class MissingPayloadError extends NotFoundError {}

/**
 * External Storage in Postgres (table payload_blobs, migration 020): one row per distinct
 * payload, keyed by the SHA-256 of its bytes. Storing the same bytes again (a retried task)
 * adds no row and, within the hour, writes nothing at all; after that it only refreshes
 * last_stored_at, so retention never deletes a blob a newer run still references.
 */
export class PostgresStorageDriver implements StorageDriver {
  readonly name = POSTGRES_DRIVER_NAME;
  readonly type = 'casework.postgres';

  constructor(private readonly pool: Pool) {}

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const blobs = payloads.map(toBlob);
    // One statement for the batch; duplicates inside it are collapsed first (ON CONFLICT cannot touch a row twice).
    const distinct = [...new Map(blobs.map((b) => [b.sha256, b])).values()];
    await this.pool.query(
      `INSERT INTO payload_blobs (sha256, bytes, size_bytes, namespace, workflow_id)
       SELECT s, b, octet_length(b), $3, $4 FROM unnest($1::text[], $2::bytea[]) AS t(s, b)
       ON CONFLICT (sha256) DO UPDATE SET last_stored_at = now()
         WHERE payload_blobs.last_stored_at < now() - interval '1 hour'`,
      [distinct.map((b) => b.sha256), distinct.map((b) => b.bytes), context.target?.namespace ?? null, workflowIdOf(context)],
    );
    return blobs.map((b) => new StorageDriverClaim({ [SHA256_CLAIM]: b.sha256 }));
  }

  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    const hashes = claims.map((c) => claimedHash(c.claimData, this.name));
    const { rows } = await this.pool.query('SELECT sha256, bytes FROM payload_blobs WHERE sha256 = ANY($1::text[])', [[...new Set(hashes)]]);
    const found = new Map(rows.map((row) => BlobRow.parse(row)).map((r) => [r.sha256, r.bytes]));
    return hashes.map((hash) => {
      const bytes = found.get(hash);
      if (!bytes) throw new MissingPayloadError(`stored payload ${hash} is not in payload_blobs`);
      return fromBlob(hash, bytes, 'payload_blobs');
    });
  }
}

function workflowIdOf(context: StorageDriverStoreContext): string | null {
  // An activity run by a workflow is reported as that workflow (the SDK's own choice), which is
  // what retention and erasure key on; a standalone activity has no workflow to record.
  return context.target?.kind === 'workflow' ? (context.target.id ?? null) : null;
}
