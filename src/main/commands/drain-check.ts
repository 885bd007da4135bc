import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { inWorkflowTranscriptRuns } from '../../client/drain-check';
import { connectClient } from '../../temporal/client';
import { withDatabase } from '../database';

type Out = (line: string) => void;

/**
 * `casework drain-check [--task-queue <q>] [--json]`: the running investigations that began in the
 * retired in-workflow transcript mode, which must close before workers of this release take over
 * (docs/deploy.md, "Retiring the in-workflow transcript"). Exit 0 when none, 1 when some are open.
 */
export async function drainCheckCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values } = parseArgs({ args, options: { 'task-queue': { type: 'string' }, json: { type: 'boolean' } } });
  // The database holds the payloads stored by reference: a run's input may be one.
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      const runs = await inWorkflowTranscriptRuns(client, values['task-queue'] ? { taskQueue: values['task-queue'] } : {});
      if (values.json) out(JSON.stringify(runs, null, 2));
      else if (runs.length === 0) out('no running investigation keeps its transcript in the workflow: workers of this release may take over');
      else {
        out(`${runs.length} running investigation(s) keep their transcript in the workflow; let them close (or resolve them) on the release before, then check again:`);
        for (const run of runs) out(`  ${run.workflowId}  run ${run.runId}  started ${run.startedAt}${run.status ? `  ${run.status}` : ''}`);
      }
      return runs.length === 0 ? 0 : 1;
    } finally {
      await close();
    }
  });
}
