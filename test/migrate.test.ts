import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listMigrations, migrate, MIGRATIONS_DIR, RENAMED_MIGRATIONS } from '../src/db/migrate';
import type { Database } from '../src/db/pool';
import { openTestDatabase } from './support/db';

describe('migrations', () => {
  let db: Database;
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => {
    await db?.close();
  });

  const applied = async () => (await db.admin.query<{ id: string }>('SELECT id FROM schema_migrations ORDER BY id')).rows.map((r) => r.id);

  it('keeps the refund trail in a product migration of its own, not with the shop tables', () => {
    const ids = listMigrations().map((m) => m.id);
    assert.ok(ids.includes('003_refund_trail'));
    const shop = readFileSync(join(MIGRATIONS_DIR, '002_shop.sql'), 'utf8');
    assert.doesNotMatch(shop, /CREATE TABLE refund/);
  });

  it('records every migration once and applies nothing on a second run', async () => {
    assert.deepEqual(
      await applied(),
      listMigrations().map((m) => m.id),
    );
    assert.deepEqual(await migrate(db.admin), []);
  });

  it('treats a database that applied a migration before it was split as having its parts', async () => {
    // A database migrated before the split: it recorded 002_demo_data, not its two parts.
    await db.admin.query("DELETE FROM schema_migrations WHERE id IN ('002_shop', '003_refund_trail')");
    await db.admin.query("INSERT INTO schema_migrations (id) VALUES ('002_demo_data')");
    assert.deepEqual(await migrate(db.admin), []);
    const ids = await applied();
    for (const part of RENAMED_MIGRATIONS['002_demo_data'] ?? []) assert.ok(ids.includes(part), `${part} recorded`);
  });

  it('refuses a folder whose files break the numbering, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'casework-migrations-'));
    writeFileSync(join(dir, '001_a.sql'), 'SELECT 1');
    writeFileSync(join(dir, '1_b.sql'), 'SELECT 1');
    assert.throws(() => listMigrations(dir), /migration file 1_b\.sql is not named NNN_name\.sql/);
  });
});
