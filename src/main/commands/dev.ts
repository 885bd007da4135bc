import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { startLocalStack } from '../../dev/env/stack';
import { UsageError } from '../usage';

type Out = (line: string) => void;

/** Where `casework dev` serves the embedded Postgres, so commands in other terminals can reach it. */
export const DEV_DB_PORT = 5433;

/**
 * `casework dev [--db-port N]`: what the README walkthrough needs, in one process, until Ctrl-C:
 * the Temporal dev server at TEMPORAL_ADDRESS (started, or reused when one answers there) with
 * its web UI, Postgres with the demo shop data, and a worker. The embedded Postgres belongs to
 * one process, so this one serves it on a port and prints the DATABASE_URL other terminals set;
 * with DATABASE_URL set, that database is migrated and seeded instead.
 */
export async function devCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values } = parseArgs({ args, options: { 'db-port': { type: 'string' } } });
  const dbPort = values['db-port'] === undefined ? DEV_DB_PORT : Number(values['db-port']);
  if (!Number.isInteger(dbPort) || dbPort < 0 || dbPort > 65535) throw new UsageError(`--db-port must be a port number, not "${values['db-port']}"`);
  out('casework dev: starting the Temporal dev server, Postgres with the demo shop data and a worker...');
  const stack = await startLocalStack(config, { dbPort });
  try {
    const { db, server } = stack;
    out(`  Temporal ${config.TEMPORAL_ADDRESS} (web UI ${server.uiUrl}${server.startedHere ? '' : ', already running'}); task queue ${config.TEMPORAL_TASK_QUEUE}`);
    out(`  Postgres: ${db.embedded ? `embedded, in ${config.CASEWORK_DATA_DIR}, served at ${db.url}` : db.url.replace(/\/\/[^@/]*@/, '//')}; demo shop data loaded`);
    out(`  worker: model ${stack.model.label}`);
    out('');
    if (db.embedded) {
      out("In another terminal, point the CLI at this database (the embedded Postgres is this process's alone):");
      out(`  export DATABASE_URL=${db.url}`);
    } else out('In another terminal, with the same DATABASE_URL:');
    out('  bin/casework ticket examples/events/dana-5102.json --wait');
    out('Ctrl-C stops the worker, the database and the dev server this started.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    return 0;
  } finally {
    await stack.stop();
  }
}
