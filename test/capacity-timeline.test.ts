import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import { followUpTimeline, timelineTable } from '../src/dev/bench/capacity-timeline';

// The capacity bench's attribution of a follow-up's time, over a history written by hand in the
// shapes the server returns: event ids, event times (seconds and nanos) and attributes.

const E = temporal.api.enums.v1.EventType;
const STICKY = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY;
const T0 = 1_780_000_000_000;

type Event = temporal.api.history.v1.IHistoryEvent;
let nextId = 1;
// Ids and times as the server sends them; the proto types say Long, protobufjs also decodes plain numbers.
const at = (ms: number) => ({ seconds: Math.floor((T0 + ms) / 1000), nanos: ((T0 + ms) % 1000) * 1e6 }) as unknown as Event['eventTime'];
const event = (ms: number, eventType: temporal.api.enums.v1.EventType, attributes: Partial<Event> = {}): Event => ({
  eventId: nextId++ as unknown as Event['eventId'],
  eventTime: at(ms),
  eventType,
  ...attributes,
});

/** A turn: signal at 10 ms; three workflow tasks around two model calls; then the desk post. */
function followUpHistory(): Event[] {
  nextId = 40;
  const events: Event[] = [event(0, E.EVENT_TYPE_TIMER_STARTED)];
  const task = (scheduledAt: number, startedAt: number, completedAt: number) => {
    const scheduled = event(scheduledAt, E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, { workflowTaskScheduledEventAttributes: { taskQueue: { name: 'w', kind: STICKY } } });
    const started = event(startedAt, E.EVENT_TYPE_WORKFLOW_TASK_STARTED, { workflowTaskStartedEventAttributes: { scheduledEventId: scheduled.eventId } });
    const completed = event(completedAt, E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, {
      workflowTaskCompletedEventAttributes: { scheduledEventId: scheduled.eventId, startedEventId: started.eventId },
    });
    events.push(scheduled, started, completed);
  };
  const activity = (name: string, scheduledAt: number, completedAt?: number) => {
    const scheduled = event(scheduledAt, E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, { activityTaskScheduledEventAttributes: { activityType: { name } } });
    events.push(scheduled);
    if (completedAt !== undefined)
      events.push(event(completedAt, E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, { activityTaskCompletedEventAttributes: { scheduledEventId: scheduled.eventId } }));
  };
  events.push(event(10, E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED));
  task(10, 40, 90); // queued 30, run 50 (a replay)
  activity('callModelOnPlan', 90, 100);
  task(100, 103, 113); // queued 3, run 10
  activity('callModelOnPlan', 113, 125);
  task(125, 130, 134); // queued 5, run 4
  activity('postToDesk', 135, 150);
  return events;
}

describe('where a follow-up’s time went', () => {
  it('splits a follow-up into the gate, each workflow task queued and run, the model calls and the desk post', () => {
    const t = followUpTimeline(followUpHistory(), T0 - 5, T0 + 140);
    assert.ok(t);
    assert.equal(t.gateMs, 15);
    assert.equal(t.firstTaskQueuedMs, 30);
    assert.equal(t.firstTaskRunMs, 50);
    assert.equal(t.laterTasks, 2);
    assert.equal(t.laterTasksQueuedMs, 8);
    assert.equal(t.laterTasksRunMs, 14);
    assert.equal(t.activities, 2);
    assert.equal(t.activitiesMs, 22);
    assert.equal(t.stickyTasks, 3);
    assert.equal(t.failedTasks, 0);
    assert.equal(t.deskMs, 5);
    // Signal (10) → post scheduled (135) is 125 ms, of which the tasks and activities cover 124.
    assert.equal(Math.round(t.otherMs * 1000) / 1000, 1);
    assert.equal(t.totalMs, 145);
  });

  it('attributes only the last customer message, and reports nothing for a turn without a desk post', () => {
    const events = followUpHistory();
    // An earlier customer message (the opening turn's) changes nothing: the follow-up is the last one.
    const withEarlier = [event(-60_000, E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED), ...events];
    assert.deepEqual(followUpTimeline(withEarlier, T0 - 5, T0 + 140), followUpTimeline(events, T0 - 5, T0 + 140));
    // Without the desk post's scheduled and completed events there is no reply to attribute.
    assert.equal(followUpTimeline(events.slice(0, -2), T0, T0 + 140), null);
    assert.equal(followUpTimeline([], T0, T0 + 1), null);
  });

  it('prints one column per kind of case that has follow-ups, each part as p50/p95', () => {
    const t = followUpTimeline(followUpHistory(), T0 - 5, T0 + 140)!;
    const lines = timelineTable([
      { name: 'cached', timelines: [t, t] },
      { name: 'evicted', timelines: [] },
    ]);
    assert.match(lines[1]!, /cached \(2\)/);
    assert.doesNotMatch(lines[1]!, /evicted/);
    assert.match(
      lines.find((l) => l.includes("signal's workflow task run"))!,
      / 50\.0\/50\.0$/,
    );
    assert.match(
      lines.find((l) => l.includes('send → reply at the desk'))!,
      / 145\.0\/145\.0$/,
    );
    assert.match(lines[lines.length - 1]!, /3 \(3 sticky\), 2, 0$/);
  });
});
