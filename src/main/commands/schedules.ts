import type { Config } from '../../config';
import { applyRetentionSchedule } from '../../client/schedules';
import { connectClient } from '../../temporal/client';
import { UsageError } from '../usage';

type Out = (line: string) => void;

/** `casework schedules apply`: creates or updates the retention schedule (docs/operations.md, "Retention"). */
export async function schedulesCommand(args: string[], config: Config, out: Out): Promise<number> {
  if (args.length !== 1 || args[0] !== 'apply') throw new UsageError('usage: casework schedules apply   create or update the retention schedule');
  const { client, close } = await connectClient(config);
  try {
    const applied = await applyRetentionSchedule(client, config);
    out(`${applied.action} schedule ${applied.scheduleId}: retention at "${applied.cron}" (UTC) on task queue ${applied.taskQueue}`);
    return 0;
  } finally {
    await close();
  }
}
