import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction, type ScheduleSpec } from '@temporalio/client';
import type { Config } from '../config';
import type { retention } from '../workflows/retention';

// The Temporal Schedules casework runs (docs/operations.md, "Retention"): created or brought
// up to date by `casework schedules apply`, so a deployment converges on the settings of the
// process that applied them however often it runs.

/** The retention schedule's id, and the prefix of the workflow ids it starts. */
export const RETENTION_SCHEDULE_ID = 'casework-retention';

/** What `apply` did to a schedule. */
export interface Applied {
  scheduleId: string;
  action: 'created' | 'updated';
  cron: string;
  taskQueue: string;
}

/** The retention schedule as the configuration says it should be. */
function retentionSchedule(config: Config): { spec: ScheduleSpec; action: ScheduleOptionsStartWorkflowAction<typeof retention> } {
  return {
    spec: { cronExpressions: [config.CASEWORK_RETENTION_CRON] },
    action: { type: 'startWorkflow', workflowType: 'retention', workflowId: RETENTION_SCHEDULE_ID, taskQueue: config.TEMPORAL_TASK_QUEUE, args: [{}] },
  };
}

/**
 * Creates the retention schedule, or updates the one there to the configured spec and action
 * (idempotent: applying twice leaves one schedule, as configured). A run still going when the
 * next is due is not doubled (overlap: skip); one missed while the cluster was down runs once.
 */
export async function applyRetentionSchedule(client: Client, config: Config): Promise<Applied> {
  const { spec, action } = retentionSchedule(config);
  const applied = { scheduleId: RETENTION_SCHEDULE_ID, cron: config.CASEWORK_RETENTION_CRON, taskQueue: config.TEMPORAL_TASK_QUEUE };
  try {
    await client.schedule.create({
      scheduleId: RETENTION_SCHEDULE_ID,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
    });
    return { ...applied, action: 'created' };
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  await client.schedule
    .getHandle(RETENTION_SCHEDULE_ID)
    .update((previous) => ({ ...previous, spec, action, policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' } }));
  return { ...applied, action: 'updated' };
}
