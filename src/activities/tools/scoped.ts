import type { Pool, PoolClient } from 'pg';
import { mapPgError } from '../../db/errors';
import { withCustomer } from '../../db/pool';

/**
 * Runs a tool's queries in one transaction scoped to the authenticated customer (row-level
 * security), mapping pg errors to casework's typed errors. A ToolError passes through as is.
 */
export async function scoped<T>(pool: Pool, customerId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  try {
    return await withCustomer(pool, customerId, fn);
  } catch (error) {
    throw mapPgError(error);
  }
}
