import { loadConfig } from '../../src/config';
import { migrate } from '../../src/db/migrate';
import { openDatabase, type Database } from '../../src/db/pool';

/**
 * Opens the database the suite runs against (DATABASE_URL, set by scripts/test.ts; else an
 * in-memory embedded Postgres) with every migration applied.
 */
export async function openTestDatabase(): Promise<Database> {
  const config = loadConfig();
  const db = await openDatabase(config, { dataDir: 'memory://' });
  await migrate(db.admin);
  return db;
}

/** A short unique suffix so tests sharing one database never collide. */
export function unique(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
