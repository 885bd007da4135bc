import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { undrainedRuns, type UndrainedRun } from '../../client/drain-check';
import { connectClient } from '../../temporal/client';
import { withDatabase } from '../database';

type Out = (line: string) => void;

/** Why a run would not replay on this release, in a few words. */
function why(run: UndrainedRun): string {
  const reasons = [...(run.inWorkflowTranscript ? ['transcript kept in the workflow'] : []), ...(run.patches.length ? [`recorded patches ${run.patches.join(', ')}`] : [])];
  return reasons.join('; ');
}

/**
 * `casework drain-check [--task-queue <q>] [--json]`: the running investigations whose current run
 * would not replay on this release — begun in the retired in-workflow transcript mode, or on a
 * build that still said patched() for a patch this release removed — which must close before
 * workers of this release take over (docs/deploy.md, "Retiring old workflow code").
 * Exit 0 when none, 1 when some are open.
 */
export async function drainCheckCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values } = parseArgs({ args, options: { 'task-queue': { type: 'string' }, json: { type: 'boolean' } } });
  // The database holds the payloads stored by reference: a run's input may be one.
  return withDatabase(config, async (db) => {
    const { client, close } = await connectClient(config, { pool: db.app });
    try {
      const runs = await undrainedRuns(client, values['task-queue'] ? { taskQueue: values['task-queue'] } : {});
      if (values.json) out(JSON.stringify(runs, null, 2));
      else if (runs.length === 0) out('every running investigation replays on this release: its workers may take over');
      else {
        out(`${runs.length} running investigation(s) would not replay on this release; let them close (or resolve them) on the release before, then check again:`);
        for (const run of runs) out(`  ${run.workflowId}  run ${run.runId}  started ${run.startedAt}${run.status ? `  ${run.status}` : ''}  (${why(run)})`);
      }
      return runs.length === 0 ? 0 : 1;
    } finally {
      await close();
    }
  });
}
