import type { Pool } from 'pg';
import { withModelFailures } from '../model/errors';
import type { Model } from '../model/port';
import { createBulkReadActivities } from './bulk-read';
import { createCompactionActivities } from './compaction';
import { createMemoryActivities } from './memory';
import { createModelActivities } from './model';
import { createToolActivities } from './tools';

/** What the activities need from the world; built once, in worker.ts. */
export interface ActivityDeps {
  /** The application pool (acts as casework_app, under row-level security). */
  pool: Pool;
  model: Model;
  noteTtlMonths: number;
}

/** Every activity the Investigation workflow calls, keyed by activity name (tools by tool name). */
export function createActivities(deps: ActivityDeps) {
  // Model errors are mapped for Temporal here, once, for every activity that calls the model.
  const model = withModelFailures(deps.model);
  return {
    ...createModelActivities({ model }),
    ...createToolActivities({ pool: deps.pool }),
    ...createMemoryActivities({ pool: deps.pool, noteTtlMonths: deps.noteTtlMonths }),
    ...createCompactionActivities({ model }),
    ...createBulkReadActivities({ pool: deps.pool, model }),
  };
}

/** The activity interface the workflow proxies. */
export type Activities = ReturnType<typeof createActivities>;
