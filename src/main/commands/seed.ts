import type { Config } from '../../config';
import { seedDemoData, SEED_TABLES } from '../../dev/demo-data/seed';
import { withDatabase } from '../database';
import { UsageError } from '../usage';

type Out = (line: string) => void;

/**
 * `casework seed`: loads the demo shop's customers, orders, parcels, payments, earlier tickets
 * and policies (src/dev/demo-data) into the configured database, DATABASE_URL or the embedded
 * one, after migrating it, so the README walkthrough and the example events find what they
 * name. Rows already there are left as they are: running it twice adds nothing.
 */
export async function seedCommand(args: string[], config: Config, out: Out): Promise<number> {
  if (args.length) throw new UsageError(`seed takes no arguments (it loads the demo data into DATABASE_URL, or the embedded Postgres when unset); got ${args.join(' ')}`);
  return withDatabase(config, async (db) => {
    const summary = await seedDemoData(db.admin);
    const where = db.embedded ? `the embedded Postgres in ${config.CASEWORK_DATA_DIR}` : db.url.replace(/\/\/[^@/]*@/, '//');
    const added = SEED_TABLES.map((table) => `${summary[table]} ${table.replace(/_/g, ' ')}`).join(', ');
    const total = SEED_TABLES.reduce((n, table) => n + summary[table], 0);
    out(total ? `demo shop data loaded into ${where}: ${added}` : `demo shop data was already in ${where}; nothing added`);
    return 0;
  });
}
