import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { PROJECT_ROOT } from '../config';
import { mapPgError } from './errors';

/** Folder of numbered migrations: 001_name.sql, 002_name.sql, … (beside src/, whether run from source or from dist/). */
export const MIGRATIONS_DIR = join(PROJECT_ROOT, 'migrations');

/** Raised for a migration folder that breaks the numbering rules, or a migration that fails. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Migrations that were split or renamed after they shipped: a database that applied the old
 * id already has what the new ids create, so they are recorded as applied, not run again.
 * (002_demo_data held the shop's tables and the refund trail together.)
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, readonly string[]>> = {
  '002_demo_data': ['002_shop', '003_refund_trail'],
};

/** Lists migration files in order, checking each name is NNN_name.sql and numbers do not repeat. */
export function listMigrations(dir = MIGRATIONS_DIR): { id: string; file: string }[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const seen = new Set<string>();
  return files.map((file) => {
    const [, number] = /^(\d{3})_[a-z0-9_]+\.sql$/.exec(file) ?? [];
    if (number === undefined) throw new MigrationError(`migration file ${file} is not named NNN_name.sql`);
    if (seen.has(number)) throw new MigrationError(`two migrations share number ${number}`);
    seen.add(number);
    return { id: file.replace(/\.sql$/, ''), file: join(dir, file) };
  });
}

/**
 * Applies each migration not yet recorded, each in its own transaction, recording it in the
 * same transaction so a failure leaves nothing half-applied. Serialised by an advisory lock so
 * two workers starting at once do not race. Returns the ids applied now.
 */
export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const client = await pool.connect().catch((error: unknown) => {
    throw mapPgError(error);
  });
  // A connection lost mid-migration fails the query in flight; the client's own event must not crash the process.
  client.on('error', () => undefined);
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock(7233001)');
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id));
    for (const [old, ids] of Object.entries(RENAMED_MIGRATIONS)) {
      if (!done.has(old)) continue;
      for (const id of ids.filter((i) => !done.has(i))) {
        await client.query('INSERT INTO schema_migrations (id) VALUES ($1) ON CONFLICT DO NOTHING', [id]);
        done.add(id);
      }
    }
    for (const migration of listMigrations(dir)) {
      if (done.has(migration.id)) continue;
      const sql = readFileSync(migration.file, 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (id) VALUES ($1)', [migration.id]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new MigrationError(`migration ${migration.id} failed: ${(error as Error).message}`);
      }
      applied.push(migration.id);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(7233001)').catch(() => undefined);
    client.release();
  }
  return applied;
}
