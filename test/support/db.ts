import { Client as PgClient } from 'pg';
import { loadConfig } from '../../src/config';
import { migrate } from '../../src/db/migrate';
import { openDatabase, type Database } from '../../src/db/pool';
import { seedDemoData } from '../../src/dev/demo-data/seed';

/** A short unique suffix so tests sharing one database never collide. */
export function unique(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new PgClient({ connectionString: url, connectionTimeoutMillis: 8_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A database of its own for one test file (or test), with every migration applied: a fresh
 * database on the DATABASE_URL server when set, else an in-memory embedded Postgres. Closing
 * it drops what it created. With `seed`, the demo data is loaded too; with `migrationsDir`, only
 * the migrations in that folder are applied (to test a later one over an older schema).
 */
export async function openTestDatabase(options: { seed?: boolean; migrationsDir?: string } = {}): Promise<Database> {
  const config = loadConfig();
  let dropDatabase: (() => Promise<void>) | undefined;
  let url = config.DATABASE_URL;
  if (url) {
    const name = unique('casework_t').replace(/-/g, '_');
    await adminQuery(url, `CREATE DATABASE ${name}`);
    const base = url;
    dropDatabase = () => adminQuery(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const scoped = new URL(url);
    scoped.pathname = `/${name}`;
    url = scoped.toString();
  }
  const db = await openDatabase({ ...config, DATABASE_URL: url }, { dataDir: 'memory://' });
  await migrate(db.admin, options.migrationsDir);
  if (options.seed) await seedDemoData(db.admin);
  return {
    ...db,
    async close() {
      await db.close();
      await dropDatabase?.().catch(() => undefined);
    },
  };
}

/**
 * Set when the suite runs on the embedded Postgres, whose connections share one session: there
 * only withCustomer's transaction-local role applies, so an unscoped app query is not refused.
 * On a real server (DATABASE_URL, as in CI) the app pool is the casework_app role throughout.
 */
export const EMBEDDED_SHARED_SESSION: false | string = process.env.DATABASE_URL
  ? false
  : 'embedded Postgres shares one session between connections; run with DATABASE_URL to check unscoped queries';
