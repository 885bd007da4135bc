import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config';
import { DatabaseUnavailableError } from '../db/errors';
import { migrate } from '../db/migrate';
import { openDatabase } from '../db/pool';
import { InvalidEventError } from '../schemas/event';
import { TemporalUnavailableError } from '../temporal/connection';
import { runWorker } from '../worker';
import { runContextBench } from '../dev/bench/context';
import { runMemoryBench } from '../dev/bench/memory';
import { runWorkflowBench } from '../dev/bench/workflow';
import { runDemo } from '../dev/demo/run';
import { serveCommand } from './commands/serve';
import { pricesFromConfig } from '../settings';
import { decideCommand, statusCommand, ticketCommand } from './commands/investigation';
import { runMemoryCommand } from './commands/memory';
import { USAGE, UsageError } from './usage';
import { DecisionRejectedError, InvestigationNotFoundError } from '../client/investigations';

type Out = (line: string) => void;

async function withDatabase<T>(config: Config, fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const db = await openDatabase(config);
  try {
    await migrate(db.admin);
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function benchCommand(args: string[], config: Config, out: Out): Promise<number> {
  const [which, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: { json: { type: 'boolean' }, customers: { type: 'string' }, notes: { type: 'string' }, samples: { type: 'string' }, 'no-workflow': { type: 'boolean' } },
  });
  if (which === 'context') {
    runContextBench({ json: values.json, out, prices: pricesFromConfig(config) });
    if (!values['no-workflow']) {
      await runWorkflowBench(config, { out, json: values.json });
    }
    return 0;
  }
  if (which === 'memory') {
    const count = (v: string | undefined, flag: string) => {
      if (v === undefined) return undefined;
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${flag} must be a positive whole number, got "${v}"`);
      return Number(v);
    };
    await withDatabase(config, (db) =>
      runMemoryBench({
        pool: db.admin,
        appPool: db.app,
        customers: count(values.customers, '--customers'),
        notesPerCustomer: count(values.notes, '--notes'),
        samples: count(values.samples, '--samples'),
        json: values.json,
        out,
      }),
    );
    return 0;
  }
  throw new UsageError(which ? `unknown benchmark "${which}" (context or memory)` : 'name a benchmark: context or memory');
}

/** Runs one casework command; returns its exit code (0 done, 1 failed, 2 bad input). */
export async function main(argv: string[], out: Out = console.log, err: Out = console.error): Promise<number> {
  const [command, ...args] = argv;
  try {
    const config = loadConfig();
    switch (command) {
      case 'ticket':
        return await ticketCommand(args, config, out);
      case 'status':
        return await statusCommand(args, config, out);
      case 'approve':
        return await decideCommand('approved', args, config, out);
      case 'deny':
        return await decideCommand('denied', args, config, out);
      case 'worker':
        await runWorker(config, out);
        return 0;
      case 'serve':
        return await serveCommand(args, config, out);
      case 'demo':
        await runDemo(config, out, { keepRunning: process.stdout.isTTY && !process.env.CI });
        return 0;
      case 'memory':
        return await withDatabase(config, (db) => runMemoryCommand(args, { pool: db.app, out }));
      case 'bench':
        return await benchCommand(args, config, out);
      case 'help':
      case '--help':
      case undefined:
        out(USAGE);
        return command ? 0 : 2;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    const e = error as Error & { code?: string };
    if (error instanceof UsageError || e.code?.startsWith('ERR_PARSE_ARGS')) {
      err(`error: ${e.message}`);
      err(USAGE);
      return 2;
    }
    if (error instanceof InvalidEventError || error instanceof InvestigationNotFoundError || error instanceof DecisionRejectedError || error instanceof ConfigError) {
      err(`error: ${e.message}`);
      return 2;
    }
    if (error instanceof TemporalUnavailableError || error instanceof DatabaseUnavailableError) {
      err(`error: ${e.message}`);
      return 1;
    }
    err(`error: ${e.stack ?? e.message}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
