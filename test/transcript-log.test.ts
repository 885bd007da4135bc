import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createTranscriptActivities, withResultLogging } from '../src/activities/transcript-log';
import { loadConfig } from '../src/config';
import { EntryConflictError, MissingEntryError, nextFreeSeq, TranscriptLog } from '../src/db/transcript-log';
import type { Database } from '../src/db/pool';
import { transcriptCommand } from '../src/main/commands/transcript';
import type { ToolCall, ToolOutcome } from '../src/schemas/tool-call';
import type { Model } from '../src/model/port';
import type { ModelReply } from '../src/schemas/model';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import type { CompactionPlan, LogEntry, StepPlan } from '../src/schemas/transcript-log';
import { encodeLayout } from '../src/context/plan-encoding';
import { bodyCodecOf } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { openTestDatabase, unique } from './support/db';

// The transcript log: every entry of a conversation written once, encrypted with the payload
// keys, read back word for word by number and by `casework transcript`.

let db: Database;
let log: TranscriptLog;
const config = loadConfig();
before(async () => {
  db = await openTestDatabase();
  log = new TranscriptLog(db.app, bodyCodecOf(codecFor(config)));
});
after(async () => {
  await db?.close();
});

const result = (seq: number, text: string, id = `toolu_${seq}`): LogEntry => ({
  seq,
  kind: 'message',
  role: 'user',
  body: { type: 'tool_result', tool_use_id: id, content: text },
  tokens: Math.ceil(text.length / 4),
});
const rows = async (workflowId: string) => Number((await db.admin.query('SELECT count(*) AS n FROM transcript_log WHERE workflow_id = $1', [workflowId])).rows[0].n);

describe('transcript log', () => {
  test('the same entry written twice is stored once and read back word for word', async () => {
    const workflowId = unique('investigation');
    const entry = result(1, 'Parcel 5102 scanned at Tilburg hub, bag 44. '.repeat(300));
    await log.write(workflowId, [entry]);
    await log.write(workflowId, [entry]);
    assert.equal(await rows(workflowId), 1);
    const [read] = await log.read(workflowId, [1]);
    assert.deepEqual(read, entry);
  });

  test('a run reads only its own numbers: the range bounds what all() returns, and the next free number follows every run', async () => {
    const workflowId = unique('investigation');
    await log.write(
      workflowId,
      [1, 2, 3, 4, 5].map((seq) => result(seq, `words of entry ${seq}`)),
    );
    const seqs = async (range: { from?: number; through?: number }) => (await log.all(workflowId, ['message'], range)).map((e) => e.seq);
    assert.deepEqual(await seqs({}), [1, 2, 3, 4, 5]);
    assert.deepEqual(await seqs({ from: 3 }), [3, 4, 5], 'a reopened run starting at 3 does not read the closed run');
    assert.deepEqual(await seqs({ through: 2 }), [1, 2]);
    assert.deepEqual(await seqs({ from: 2, through: 4 }), [2, 3, 4]);
    assert.equal(await nextFreeSeq(db.app, workflowId), 6);
    assert.equal(await nextFreeSeq(db.app, unique('investigation')), 1, 'an investigation with no entries starts at 1');
  });

  test('a different body for an entry already written is refused, naming it', async () => {
    const workflowId = unique('investigation');
    await log.write(workflowId, [result(3, 'first words')]);
    await assert.rejects(log.write(workflowId, [result(3, 'other words')]), (e) => e instanceof EntryConflictError && e.message.includes(`entry 3 of ${workflowId}`));
    const [kept] = await log.write(workflowId, [result(3, 'other words')], 'keep-stored');
    assert.equal((kept!.body as { content: string }).content, 'first words');
  });

  test('bodies are ciphertext at rest', async () => {
    const workflowId = unique('investigation');
    await log.write(workflowId, [result(1, 'card ending 4242, delivered to Keizersgracht 12')]);
    const { rows: raw } = await db.admin.query('SELECT body FROM transcript_log WHERE workflow_id = $1', [workflowId]);
    const bytes = Buffer.from(raw[0].body).toString('latin1');
    assert.ok(!bytes.includes('Keizersgracht') && !bytes.includes('4242'), 'no customer text in the stored bytes');
  });

  test('an entry a plan names that is not in the log is an error naming it', async () => {
    await assert.rejects(log.read('investigation-none', [7]), (e) => e instanceof MissingEntryError && /entry 7 of investigation-none/.test(e.message));
  });

  test('a retried tool activity writes its result once and returns only a preview', async () => {
    const workflowId = unique('investigation');
    const long = 'Tracking event: out for delivery, Tilburg. '.repeat(400);
    let calls = 0;
    const tools = withResultLogging(
      {
        async get_tracking_events(_call: ToolCall): Promise<ToolOutcome> {
          calls += 1;
          return { is_error: false, content: calls === 1 ? long : 'the records changed meanwhile' };
        },
      },
      log,
    );
    const call: ToolCall = {
      name: 'get_tracking_events',
      input: { order_id: '5102' },
      context: { workflowId, ticketId: 'T-1', customerId: 'c', toolUseId: 'toolu_a' },
      log: { seq: 5 },
    };
    const first = (await tools.get_tracking_events(call)) as unknown as { content: string; logged: { seq: number; tokens: number } };
    const retried = (await tools.get_tracking_events(call)) as unknown as { content: string; logged: { seq: number } };
    assert.equal(await rows(workflowId), 1, 'the retry wrote nothing');
    assert.ok(first.content.length < 200, 'only a preview goes back to the workflow');
    assert.equal(retried.content, first.content, 'the result already written wins over a retry that computed another');
    assert.deepEqual(first.logged, { seq: 5, tokens: Math.ceil(long.length / 4) });
    const [stored] = await log.read(workflowId, [5]);
    assert.equal((stored!.body as { content: string }).content, long);
  });

  // A worker killed after the model answered and the reply was written, before Temporal heard the
  // activity complete: the retry used to ask (and pay) the model again, and its different reply
  // collided with the blocks already written (EntryConflictError), so the case went to a person.
  // A retry is the same activity of the same run; any other model call asks the model.
  describe('the model step keeps the reply it paid for', () => {
    /** A model double that answers `replies` in turn (the last one again when they run out) and counts the calls. */
    function countingModel(...replies: ModelReply['content'][]): Model & { asked: () => number } {
      let asked = 0;
      return {
        label: 'counting double',
        offline: true,
        asked: () => asked,
        async create(): Promise<ModelReply> {
          const content = replies[Math.min(asked, replies.length - 1)]!;
          asked += 1;
          return {
            id: `msg_${asked}`,
            model: 'claude-double',
            content,
            stop_reason: asked === 1 ? 'max_tokens' : 'end_turn',
            usage: { input_tokens: 40 + asked, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          };
        },
      };
    }
    const says = (value: string): ModelReply['content'] => [{ type: 'text', text: value, citations: null }];
    const planFor = (replySeq: number): StepPlan => ({
      v: 2,
      entries: [{ seq: 1, kind: 'message', role: 'user', body: { type: 'text', text: 'Where is my parcel 5102?' }, tokens: 7 }],
      layout: encodeLayout([{ role: 'user', seqs: [1] }]),
      cleared: '',
      context: { memory: null, agentNotes: null, caseNotes: null },
      replySeq,
      max_tokens: 64,
    });
    /** Runs `fn` as attempt `attempt` of activity `activityId` in run `runId` of `workflowId`. */
    const asActivity = <T>(workflowId: string, runId: string, activityId: string, attempt: number, fn: () => Promise<T>) =>
      new MockActivityEnvironment({ workflowExecution: { workflowId, runId }, activityId, attempt }).run<[], T, () => Promise<T>>(fn);

    test('a retry returns the kept reply, stop reason and usage included, without asking the model again', async () => {
      const workflowId = unique('investigation');
      const model = countingModel(says('Your parcel 5102 was left at Block B.'), says('A different answer the second time.'));
      const { callModelOnPlan } = createTranscriptActivities({ model, log });
      const plan = planFor(2);
      const first = await asActivity(workflowId, 'run-1', '7', 1, () => callModelOnPlan(plan));
      const retried = await asActivity(workflowId, 'run-1', '7', 2, () => callModelOnPlan(plan));
      assert.equal(model.asked(), 1, 'the retry did not ask the model');
      assert.deepEqual(retried, first);
      assert.equal(retried.stop_reason, 'max_tokens');
      const [block] = await log.read(workflowId, [2]);
      assert.equal((block!.body as { text: string }).text, 'Your parcel 5102 was left at Block B.');
      const kept = await db.admin.query('SELECT body, reply_seq FROM model_replies WHERE workflow_id = $1', [workflowId]);
      assert.equal(kept.rowCount, 1);
      assert.equal(kept.rows[0].reply_seq, 2);
      assert.doesNotMatch(kept.rows[0].body.toString('latin1'), /parcel 5102/, 'the kept reply is ciphertext at rest');
    });

    test('a local call run again as a first attempt (its task lost to an eviction) returns the kept reply without asking the model', async () => {
      const workflowId = unique('investigation');
      const model = countingModel(says('Your parcel 5102 was left at Block B.'), says('A different answer the second time.'));
      const { callModelOnPlan } = createTranscriptActivities({ model, log });
      const local = <T>(fn: () => Promise<T>) =>
        new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'run-1' }, activityId: '3', attempt: 1, isLocal: true }).run<[], T, () => Promise<T>>(fn);
      const first = await local(() => callModelOnPlan(planFor(2)));
      const again = await local(() => callModelOnPlan(planFor(2)));
      assert.equal(model.asked(), 1, 'the replayed call did not ask the model');
      assert.deepEqual(again, first);
    });

    test('another model call at the same entry number (after an empty reply) or a new run asks the model', async () => {
      const workflowId = unique('investigation');
      const model = countingModel([], says('Delivered on 12 October.'), says('Delivered on 12 October, as before.'));
      const { callModelOnPlan } = createTranscriptActivities({ model, log });
      const plan = planFor(2);
      const empty = await asActivity(workflowId, 'run-1', '7', 1, () => callModelOnPlan(plan));
      assert.deepEqual(empty.content, [], 'an empty reply writes no blocks, so the next call starts at the same number');
      const next = await asActivity(workflowId, 'run-1', '9', 1, () => callModelOnPlan(plan));
      assert.deepEqual(next.content, says('Delivered on 12 October.'));
      assert.equal(model.asked(), 2, 'the next call was not answered with the empty reply kept before it');
      const recovered = await asActivity(workflowId, 'run-2', '7', 1, () => callModelOnPlan(planFor(3)));
      assert.equal(model.asked(), 3, 'a new run (recovered, reopened, continued as new) is never answered from an old run');
      assert.equal(recovered.id, 'msg_3');
    });

    test('a reply kept before its blocks were written gets them written by the retry, and the first kept wins a race', async () => {
      const workflowId = unique('investigation');
      const call = { workflowId, runId: 'run-1', activityId: '4' };
      const reply: ModelReply = {
        id: 'msg_kept',
        model: 'claude-double',
        content: says('Kept before the blocks.'),
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
      assert.deepEqual(await log.keepReply(call, 4, reply), reply);
      assert.deepEqual(await log.keepReply(call, 4, { ...reply, id: 'msg_later' }), reply, 'the first reply kept wins over a racing attempt');
      const { callModelOnPlan } = createTranscriptActivities({ model: { label: 'none', offline: true, create: async () => assert.fail('the model is not asked') }, log });
      assert.deepEqual(await asActivity(workflowId, 'run-1', '4', 2, () => callModelOnPlan(planFor(4))), reply);
      const [block] = await log.read(workflowId, [4]);
      assert.deepEqual(block!.body, { type: 'text', text: 'Kept before the blocks.' });
      assert.equal(await log.replyOf({ ...call, activityId: '5' }), undefined, 'a call not answered has no kept reply');
    });
  });

  test('a retried compaction returns the notes kept by the first attempt without asking the model to summarise again', async () => {
    const workflowId = unique('investigation');
    let asked = 0;
    const notes = (problem: string) => ({ ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: problem });
    const model: Model = {
      label: 'counting double',
      offline: true,
      async create(): Promise<ModelReply> {
        asked += 1;
        const text = JSON.stringify(notes(asked === 1 ? 'parcel 5102 marked delivered, not received' : 'a different summary the second time'));
        return {
          id: `msg_${asked}`,
          model: 'claude-double',
          content: [{ type: 'text', text, citations: null }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 30, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        };
      },
    };
    const { compactFromLog } = createTranscriptActivities({ model, log });
    const plan: CompactionPlan = {
      v: 2,
      entries: [
        { seq: 1, kind: 'message', role: 'user', body: { type: 'text', text: 'My parcel 5102 says delivered but it never came.' }, tokens: 12 },
        { seq: 2, kind: 'message', role: 'assistant', body: { type: 'text', text: 'I will look into order 5102.' }, tokens: 8 },
      ],
      layout: encodeLayout([
        { role: 'user', seqs: [1] },
        { role: 'assistant', seqs: [2] },
      ]),
      previousSeq: null,
      notesSeq: 3,
    };
    type Compacted = Awaited<ReturnType<typeof compactFromLog>>;
    const attempt = (n: number) =>
      new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'run-1' }, activityId: '12', attempt: n }).run<[], Compacted, () => Promise<Compacted>>(() =>
        compactFromLog(plan),
      );
    const first = await attempt(1);
    const retried = await attempt(2);
    assert.equal(asked, 1, 'the retry did not ask the model');
    assert.deepEqual(retried, first);
    assert.equal(first.notes.customer_problem, 'parcel 5102 marked delivered, not received');
    const [stored] = await log.read(workflowId, [3]);
    assert.deepEqual(stored!.body, first.notes, 'the log holds the notes the workflow was given');
  });

  test('a plan naming entries the worker cannot read fails clearly without a log', async () => {
    const { callModelOnPlan } = createTranscriptActivities({ model: { label: 'none', offline: true, create: async () => assert.fail('no call') } });
    await assert.rejects(
      callModelOnPlan({ v: 2, entries: [], layout: '', cleared: '', context: { memory: null, agentNotes: null, caseNotes: null }, replySeq: 1, max_tokens: 10 }),
      /no transcript log/,
    );
  });

  test('casework transcript prints every entry word for word, and --json the blocks', async () => {
    const workflowId = unique('investigation');
    const long = 'Carrier note: left with neighbour at no. 14. '.repeat(200);
    await log.write(workflowId, [
      { seq: 1, kind: 'message', role: 'user', body: { type: 'text', text: 'Customer message:\nWhere is my parcel?' }, tokens: 5 },
      { seq: 2, kind: 'message', role: 'assistant', body: { type: 'tool_use', id: 'toolu_x', name: 'get_tracking_events', input: { order_id: '5102' } }, tokens: 9 },
      result(3, long, 'toolu_x'),
      { seq: 4, kind: 'memory', body: '<customer_memory>likes email</customer_memory>', tokens: 5 },
    ]);
    const lines: string[] = [];
    const cfg = { ...config, DATABASE_URL: db.url };
    assert.equal(await transcriptCommand([workflowId], cfg, (l) => lines.push(l)), 0);
    const text = lines.join('\n');
    assert.match(text, /#1 customer\nWhere is my parcel\?/);
    assert.match(text, /#3 tool result get_tracking_events \(toolu_x\)/);
    assert.ok(text.includes(long), 'the whole tool result, word for word');
    assert.ok(!text.includes('likes email'), 'context versions are not conversation entries');
    const json: string[] = [];
    await transcriptCommand([workflowId, '--json'], cfg, (l) => json.push(l));
    const entries = JSON.parse(json.join('\n')) as { seq: number; block: { content?: string } }[];
    assert.deepEqual(
      entries.map((e) => e.seq),
      [1, 2, 3],
    );
    assert.equal(entries[2]!.block.content, long);
    await assert.rejects(
      transcriptCommand(['investigation-nobody'], cfg, () => undefined),
      /no entries for investigation-nobody/,
    );
  });
});
