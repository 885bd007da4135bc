import { Pool, type PoolClient } from 'pg';
import type { Config } from '../config';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded';
import { BadInputError } from '../errors';
import { DatabaseUnavailableError, mapPgError } from './errors';

/** The role application queries run as; row-level security binds it (it owns nothing, bypasses nothing). */
export const APP_ROLE = 'casework_app';

/** casework's database handles: `admin` (migrations, seeding) and `app` (everything else, under RLS). */
export interface Database {
  url: string;
  embedded: boolean;
  admin: Pool;
  app: Pool;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 8_000;

/** Opens a pool whose every connection acts as `role` when given. */
export function openPool(url: string, max: number, role?: string): Pool {
  // The role is a startup parameter: set before the first query (none overlaps a SET ROLE), and
  // a role that does not exist fails the connection instead of leaving it as the login user.
  const pool = new Pool({ connectionString: url, max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...(role ? { options: `-c role=${role}` } : {}) });
  // Idle clients that lose their server emit 'error'; without a listener that crashes the process.
  pool.on('error', () => undefined);
  return pool;
}

/** Fails within seconds, naming the address, when Postgres cannot be reached. */
export async function checkReachable(pool: Pool, url: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    const where = url.replace(/\/\/[^@/]*@/, '//');
    throw new DatabaseUnavailableError(
      `cannot reach Postgres at ${where}: ${(error as Error).message}. ` + 'Start Postgres or set DATABASE_URL; unset, casework runs an embedded Postgres.',
    );
  }
}

/** Connects to DATABASE_URL, or starts the embedded Postgres when it is unset (on `embeddedPort`, else a free port). */
export async function openDatabase(config: Config, options: { dataDir?: string; embeddedPort?: number } = {}): Promise<Database> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.DATABASE_URL;
  if (!url) {
    embedded = await startEmbeddedPostgres({
      dataDir: options.dataDir ?? config.CASEWORK_DATA_DIR,
      maxConnections: config.CASEWORK_DB_POOL_SIZE * 2 + 4,
      ...(options.embeddedPort !== undefined ? { port: options.embeddedPort } : {}),
    });
    url = embedded.url;
  }
  const admin = openPool(url, 2);
  try {
    await checkReachable(admin, url);
  } catch (error) {
    await admin.end().catch(() => undefined);
    await embedded?.stop();
    throw error;
  }
  // The embedded server runs every connection in one Postgres session, so a role set on
  // connect would leak into the admin pool; there withCustomer's SET LOCAL ROLE alone applies.
  const app = openPool(url, config.CASEWORK_DB_POOL_SIZE, embedded ? undefined : APP_ROLE);
  return {
    url,
    embedded: Boolean(embedded),
    admin,
    app,
    async close() {
      await Promise.allSettled([admin.end(), app.end()]);
      await embedded?.stop();
    },
  };
}

/**
 * Runs `fn` in one transaction scoped to a customer: row-level security policies read
 * `casework.customer_id`, so a query that forgets its filter still sees only this customer.
 * Postgres errors are mapped here, in one place, to casework's typed errors (db/errors.ts).
 */
export async function withCustomer<T>(pool: Pool, customerId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  if (!customerId.trim()) throw new BadInputError('a customer id is required');
  // Transaction-local, so it holds even where sessions are shared (the embedded server). One
  // round trip for the three statements (the simple protocol takes several; it takes no
  // parameters, so the id is quoted by the driver): every memory read pays for this set-up.
  return inTransaction(pool, (client) => `BEGIN; SET LOCAL ROLE ${APP_ROLE}; SELECT set_config('casework.customer_id', ${client.escapeLiteral(customerId)}, true)`, fn);
}

/**
 * Runs `fn` in one transaction opened by `begin` (a BEGIN with its transaction-local settings, in
 * one round trip); committed when `fn` returns, rolled back when it throws, Postgres errors mapped
 * to casework's typed errors (db/errors.ts).
 */
export async function inTransaction<T>(pool: Pool, begin: (client: PoolClient) => string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    throw mapPgError(error);
  });
  // A connection that dies while checked out emits 'error' on the client, not the pool; unheard,
  // it would crash the process. The query in flight fails anyway, and is mapped below.
  const ignore = () => undefined;
  client.on('error', ignore);
  try {
    await client.query(begin(client));
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw mapPgError(error);
  } finally {
    client.off('error', ignore);
    client.release();
  }
}
