import { loadConfig } from '../../config';
import { openDatabase } from '../../db/pool';
import { startInProcessWorker } from '../../worker';
import { createCapacityModel } from './capacity-model';

// The capacity bench's worker, in a process of its own so its resident memory is the worker's
// alone: the real worker (bundle, data converter, activities, Postgres) with the capacity drill
// model. Configured by the environment the bench gives it; it speaks over the IPC channel:
//   → {type: 'ready', cacheSlots, identity}     once polling (identity: what the server records on its workflow tasks)
//   ← {type: 'status', gc?} → {type: 'status', cached, heapMb, modelMs: {ticketId: ms}}   (model time since the last status;
//                                with gc, the main thread's V8 heap after a full collection; workflows run in a thread of their own)
//   ← {type: 'stop'}    drains, closes and exits

/** A message the bench sends its worker. */
export type ToCapacityWorker = { type: 'status'; gc?: boolean } | { type: 'stop' };

/** A message the worker sends the bench. */
export type FromCapacityWorker =
  { type: 'ready'; cacheSlots: number; identity: string } | { type: 'status'; cached: number; heapMb: number; modelMs: Record<string, number> } | { type: 'failed'; error: string };

async function main(): Promise<void> {
  const send = (message: FromCapacityWorker) => process.send?.(message);
  const config = loadConfig();
  const db = await openDatabase(config);
  const model = createCapacityModel();
  const running = await startInProcessWorker({ config, pool: db.app, model, workflowBundlePath: config.CASEWORK_WORKFLOW_BUNDLE });
  process.on('message', (message: ToCapacityWorker) => {
    if (message.type === 'status') {
      // Started with --expose-gc by the bench.
      if (message.gc) (globalThis as { gc?: () => void }).gc?.();
      send({ type: 'status', cached: running.worker.getStatus().numCachedWorkflows, heapMb: process.memoryUsage().heapUsed / 2 ** 20, modelMs: model.take() });
    }
    if (message.type === 'stop') {
      void running
        .stop()
        .then(() => db.close())
        .finally(() => process.exit(0));
    }
  });
  send({ type: 'ready', cacheSlots: running.worker.options.maxCachedWorkflows, identity: running.worker.options.identity });
}

if (!process.send) {
  console.error('capacity-worker: run by `casework bench capacity`, which talks to it over IPC');
  process.exit(2);
}
main().catch((error: Error) => {
  process.send?.({ type: 'failed', error: error.message } satisfies FromCapacityWorker);
  process.exit(1);
});
