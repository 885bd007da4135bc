import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createActivities } from './activities';
import { loadConfig, type Config } from './config';
import { migrate } from './db/migrate';
import { openDatabase } from './db/pool';
import { selectModel } from './model/select';
import type { Model } from './model/port';
import { connectionOptions, withConnectTimeout } from './temporal/connection';

/** What a worker is built from; everything is created once, by the caller, and shared. */
export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  /** The application pool (casework_app, under row-level security). */
  pool: Pool;
  model: Model;
  /** A prebuilt workflow bundle (tests build one per suite); unset, the worker bundles src/workflows. */
  workflowBundlePath?: string;
}

/** Connects the worker's native connection, failing within seconds when Temporal is not there. */
export function connectWorker(config: Config): Promise<NativeConnection> {
  return withConnectTimeout(config.TEMPORAL_ADDRESS, () => NativeConnection.connect(connectionOptions(config)));
}

/** The casework worker: the Investigation workflow and every activity, on TEMPORAL_TASK_QUEUE. */
export function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { config } = deps;
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = deps.workflowBundlePath
    ? { workflowBundle: { codePath: deps.workflowBundlePath } }
    : { workflowsPath: require.resolve('./workflows') };
  return Worker.create({
    connection: deps.connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...workflows,
    activities: createActivities({ pool: deps.pool, model: deps.model, noteTtlMonths: config.CASEWORK_NOTE_TTL_MONTHS }),
    maxConcurrentActivityTaskExecutions: config.CASEWORK_MAX_CONCURRENT_ACTIVITIES,
  });
}

/**
 * `casework worker`: opens Postgres (migrating it), picks the model, connects to Temporal and
 * polls until SIGINT or SIGTERM, then drains in-flight tasks and closes everything.
 */
export async function runWorker(config: Config = loadConfig(), log: (line: string) => void = console.log): Promise<void> {
  const db = await openDatabase(config);
  try {
    await migrate(db.admin);
    const model = selectModel(config);
    const connection = await connectWorker(config);
    try {
      const worker = await createWorker({ config, connection, pool: db.app, model });
      log(`casework worker on task queue "${config.TEMPORAL_TASK_QUEUE}" at ${config.TEMPORAL_ADDRESS}; model: ${model.label}`);
      await worker.run();
    } finally {
      await connection.close();
    }
  } finally {
    await db.close();
  }
}

if (require.main === module) {
  runWorker().catch((error: Error) => {
    console.error(`casework worker: ${error.message}`);
    process.exit(1);
  });
}
