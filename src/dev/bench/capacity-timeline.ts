import { temporal } from '@temporalio/proto';
import { median, percentile } from './stats';

// Where a follow-up's time goes, read from its workflow's history: the server stamps every event,
// so the gaps between them show how long the signal, each workflow task (queued, then run on the
// worker: an evicted case's replay is inside its first task's run) and each activity took, up to
// the desk post that carries the reply. Pure: the bench gives it the history and its own clock's
// send and arrival times (epoch milliseconds, the same machine's clock as the server's).

const E = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** One follow-up's time, split into its parts (ms). */
export interface FollowUpTimeline {
  /** Send → the signal in history: the gate (Postgres) and the signal RPC. */
  gateMs: number;
  /** The signal's workflow task: scheduled → started (waiting for a poller). */
  firstTaskQueuedMs: number;
  /** The signal's workflow task: started → completed (for an evicted case: fetching the history and replaying it). */
  firstTaskRunMs: number;
  /** The turn's later workflow tasks before the desk post: queued, run, and how many. */
  laterTasksQueuedMs: number;
  laterTasksRunMs: number;
  laterTasks: number;
  /** Activities before the desk post (the model calls), scheduled → completed, and how many. */
  activitiesMs: number;
  activities: number;
  /** Workflow tasks of the turn (before the desk post) that went to the worker's sticky queue rather than the task queue. */
  stickyTasks: number;
  /** Workflow tasks that failed or timed out (a retried task) in the turn. */
  failedTasks: number;
  /** The desk post: its activity scheduled → the reply at the desk. */
  deskMs: number;
  /** What no part above covers: the gaps between one event and the next command. */
  otherMs: number;
  /** Send → reply at the desk. */
  totalMs: number;
}

const msOf = (event: HistoryEvent): number => {
  const t = event.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;
};
const idOf = (event: HistoryEvent): number => Number(event.eventId ?? 0);

/**
 * The timeline of the last customer message in `events` (the follow-up), sent at `sentAt` and
 * answered at the desk at `replyAt`; null when the history has no signal followed by a desk post.
 */
export function followUpTimeline(events: readonly HistoryEvent[], sentAt: number, replyAt: number): FollowUpTimeline | null {
  let signalIndex = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) {
      signalIndex = i;
      break;
    }
  }
  if (signalIndex < 0) return null;
  const turn = events.slice(signalIndex);
  const postIndex = turn.findIndex((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.activityType?.name === 'postToDesk');
  if (postIndex < 0) return null;
  const before = turn.slice(0, postIndex);
  const at = new Map(turn.map((e) => [idOf(e), msOf(e)]));
  const signalAt = msOf(turn[0]!);
  const postAt = msOf(turn[postIndex]!);
  const tasks: { queued: number; run: number }[] = [];
  let failedTasks = 0;
  let stickyTasks = 0;
  let activitiesMs = 0;
  let activities = 0;
  for (const e of before) {
    if (e.workflowTaskScheduledEventAttributes?.taskQueue?.kind === temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY) stickyTasks += 1;
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      const scheduled = at.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId ?? 0));
      if (scheduled !== undefined) tasks.push({ queued: msOf(e) - scheduled, run: 0 });
    }
    const ended = e.workflowTaskCompletedEventAttributes ?? e.workflowTaskFailedEventAttributes ?? e.workflowTaskTimedOutEventAttributes;
    if (ended) {
      if (!e.workflowTaskCompletedEventAttributes) failedTasks += 1;
      const started = at.get(Number(ended.startedEventId ?? 0));
      const task = tasks[tasks.length - 1];
      if (started !== undefined && task) task.run = msOf(e) - started;
      else if (!started && !e.workflowTaskCompletedEventAttributes) {
        // A task that timed out before any worker started it: all of it was queueing.
        const scheduled = at.get(Number(ended.scheduledEventId ?? 0));
        if (scheduled !== undefined) tasks.push({ queued: msOf(e) - scheduled, run: 0 });
      }
    }
    if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const scheduled = at.get(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? 0));
      if (scheduled !== undefined) {
        activitiesMs += msOf(e) - scheduled;
        activities += 1;
      }
    }
  }
  const [first, ...later] = tasks;
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const covered = (first ? first.queued + first.run : 0) + sum(later.map((t) => t.queued + t.run)) + activitiesMs;
  return {
    gateMs: signalAt - sentAt,
    firstTaskQueuedMs: first?.queued ?? 0,
    firstTaskRunMs: first?.run ?? 0,
    laterTasksQueuedMs: sum(later.map((t) => t.queued)),
    laterTasksRunMs: sum(later.map((t) => t.run)),
    laterTasks: later.length,
    activitiesMs,
    activities,
    failedTasks,
    stickyTasks,
    deskMs: replyAt - postAt,
    otherMs: postAt - signalAt - covered,
    totalMs: replyAt - sentAt,
  };
}

/** The identity of the worker that ran the workflow task of the last customer message in `events` (undefined without one). */
export function signalTaskIdentity(events: readonly HistoryEvent[]): string | undefined {
  let signalIndex = -1;
  for (let i = events.length - 1; i >= 0 && signalIndex < 0; i--) if (events[i]!.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) signalIndex = i;
  if (signalIndex < 0) return undefined;
  const started = events.slice(signalIndex).find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  return started?.workflowTaskStartedEventAttributes?.identity ?? undefined;
}

/** The parts of a follow-up the table shows, in order, with their labels. */
const PARTS: [keyof FollowUpTimeline, string][] = [
  ['gateMs', 'send → signal in history (gate, signal RPC)'],
  ['firstTaskQueuedMs', "signal's workflow task queued"],
  ['firstTaskRunMs', "signal's workflow task run (an evicted case's replay)"],
  ['laterTasksQueuedMs', 'later workflow tasks queued'],
  ['laterTasksRunMs', 'later workflow tasks run'],
  ['activitiesMs', 'model activities, scheduled → completed'],
  ['deskMs', 'desk post, scheduled → reply at the desk'],
  ['otherMs', 'between events and commands'],
  ['totalMs', 'send → reply at the desk'],
];

const round1 = (v: number) => Math.round(v * 10) / 10;

/**
 * The table of where follow-ups' time went, one column per kind of case: each part's median
 * and p95 over that kind's follow-ups (medians of parts need not add up to the total's median).
 */
export function timelineTable(kinds: { name: string; timelines: FollowUpTimeline[] }[]): string[] {
  const shown = kinds.filter((k) => k.timelines.length > 0);
  if (!shown.length) return [];
  const width = 56;
  const lines = [
    `  where a follow-up's time went (history event times; ms, p50/p95 of each part)`,
    `  ${'part'.padEnd(width)}${shown.map((k) => `${k.name} (${k.timelines.length})`.padStart(22)).join('')}`,
  ];
  for (const [key, label] of PARTS) {
    const cells = shown.map((k) => {
      const values = k.timelines.map((t) => t[key]).sort((a, b) => a - b);
      return `${round1(median(values)).toFixed(1)}/${round1(percentile(values, 0.95)).toFixed(1)}`.padStart(22);
    });
    lines.push(`  ${label.padEnd(width)}${cells.join('')}`);
  }
  const counts = shown.map((k) => {
    const t = k.timelines;
    return `${median(t.map((x) => 1 + x.laterTasks))} (${median(t.map((x) => x.stickyTasks))} sticky), ${median(t.map((x) => x.activities))}, ${t.reduce((n, x) => n + x.failedTasks, 0)}`.padStart(
      22,
    );
  });
  lines.push(`  ${'workflow tasks (on the sticky queue), activities, failed tasks'.padEnd(width)}${counts.join('')}`);
  return lines;
}
