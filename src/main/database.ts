import type { Config } from '../config';
import { migrate } from '../db/migrate';
import { openDatabase, type Database } from '../db/pool';

/** Opens Postgres (migrating it), runs `fn`, and closes it whatever happens. */
export async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config);
  try {
    await migrate(db.admin);
    return await fn(db);
  } finally {
    await db.close();
  }
}
