import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { withCustomer, type Database } from '../src/db/pool';
import { createLocalEmbedder } from '../src/memory/embed-local';
import type { SupersessionJudge } from '../src/memory/supersede-judge';
import { judgeReplacement } from '../src/model/offline/supersession';
import type { Model } from '../src/model/port';
import type { ModelRequest } from '../src/schemas/model';
import { openTestDatabase, unique } from './support/db';

// True supersession (issue 11): a new note replaces an older one only when it states a
// different value for the same thing. These run the real remember tool with the real local
// embedding model and the offline model's judgement, unless a test injects another judge.

const BLOCK_B = 'Deliveries to my flat must go to Block B, not the main gate';
const NIGHTS = 'I work nights, so please do not call me before noon';

type Row = { note_id: string; text: string; superseded_by: string | null };

describe('remember(): a note supersedes another only when it truly replaces it', () => {
  let db: Database;
  let clock = new Date('2026-10-14T10:00:00.000Z');
  const embedder = createLocalEmbedder();
  let memory: ReturnType<typeof createMemoryActivities>;

  const tick = () => {
    clock = new Date(clock.getTime() + 86_400_000);
  };
  const say = async (activities: typeof memory, customerId: string, fact: string) => {
    tick();
    return activities.remember({ name: 'remember', input: { fact }, context: { customerId, ticketId: 'T', workflowId: 'investigation-T', toolUseId: 'toolu' } });
  };
  const notesOf = (customerId: string) =>
    withCustomer(db.app, customerId, async (c) => (await c.query<Row>('SELECT note_id, text, superseded_by FROM memory_notes ORDER BY note_id')).rows);
  const current = async (customerId: string) => (await notesOf(customerId)).filter((n) => n.superseded_by === null).map((n) => n.text);

  before(async () => {
    db = await openTestDatabase();
    memory = createMemoryActivities({ pool: db.app, embedder, now: () => clock });
  });
  after(async () => db.close());

  it('keeps "Block B" when a neighbour, a safe place or a porch box is mentioned later', async () => {
    const customer = unique('cust');
    await say(memory, customer, BLOCK_B);
    for (const fact of [
      'My neighbour at number 12 is happy to take in parcels',
      'If nobody is in, the safe place is behind the green bin',
      'My dog barks at couriers, so leave parcels in the porch box',
    ]) {
      const outcome = await say(memory, customer, fact);
      assert.doesNotMatch(outcome.content, /replaces an older note/, fact);
    }
    assert.equal((await current(customer)).length, 4, 'every one of the four notes is current');
    const loaded = await memory.loadMemory({ customerId: customer, now: clock.toISOString() });
    assert.equal(loaded.profile.delivery_instructions?.value, BLOCK_B, 'the delivery instructions are still Block B');
    assert.match(loaded.block, /Block B/);
    assert.match(loaded.block, /porch box/);
  });

  it('keeps "do not call me before noon" when the customer later asks for email rather than phone calls', async () => {
    const customer = unique('cust');
    await say(memory, customer, NIGHTS);
    await say(memory, customer, 'Email me rather than phoning');
    assert.deepEqual((await current(customer)).sort(), ['Email me rather than phoning', NIGHTS].sort());
  });

  it('honours a true replacement: a moved address, a new delivery place, a changed channel', async () => {
    const customer = unique('cust');
    await say(memory, customer, 'I live at 22 Oak Road, Leeds');
    await say(memory, customer, BLOCK_B);
    await say(memory, customer, 'Email me rather than phoning');
    assert.match((await say(memory, customer, 'I have moved to 5 Elm Street, York')).content, /replaces an older note/);
    await say(memory, customer, 'Deliveries must now go to Block D, the new building');
    await say(memory, customer, 'Please phone me now instead of emailing');
    const notes = await notesOf(customer);
    const id = (text: string) => notes.find((n) => n.text === text)!.note_id;
    assert.equal(notes.find((n) => n.text === 'I live at 22 Oak Road, Leeds')!.superseded_by, id('I have moved to 5 Elm Street, York'));
    assert.equal(notes.find((n) => n.text === BLOCK_B)!.superseded_by, id('Deliveries must now go to Block D, the new building'));
    assert.equal(notes.find((n) => n.text === 'Email me rather than phoning')!.superseded_by, id('Please phone me now instead of emailing'));
    const shown = await memory.loadMemory({ customerId: customer, now: clock.toISOString() });
    assert.equal(shown.profile.delivery_instructions?.value, 'Deliveries must now go to Block D, the new building');
    assert.doesNotMatch(shown.block, /Oak Road/);
  });

  it('never lets a customer claim displace a fact', async () => {
    const customer = unique('cust');
    await say(memory, customer, BLOCK_B);
    await say(memory, customer, 'Deliveries must always go to Block C and are guaranteed free');
    assert.ok((await current(customer)).includes(BLOCK_B));
  });

  it('when the judge is unsure, keeps both and lets the newest win in the profile', async () => {
    const unsure: SupersessionJudge = { judge: async ({ older }) => new Map(older.map((o) => [o.id, 'unsure' as const])) };
    const activities = createMemoryActivities({ pool: db.app, embedder, judge: unsure, now: () => clock });
    const customer = unique('cust');
    await say(activities, customer, 'Deliveries must go to the main gate');
    await say(activities, customer, BLOCK_B);
    assert.equal((await current(customer)).length, 2);
    const loaded = await activities.loadMemory({ customerId: customer, now: clock.toISOString() });
    assert.equal(loaded.profile.delivery_instructions?.value, BLOCK_B);
    assert.match(loaded.block, /Deliveries must go to the main gate/, 'the older note is still shown');
  });

  it('asks a configured model, with the notes as data, and acts on its verdict; a failing model replaces nothing', async () => {
    const requests: ModelRequest[] = [];
    const says = (verdict: string): Model => ({
      label: 'fake judge',
      offline: false,
      async create(request) {
        requests.push(request);
        const ids = [...JSON.parse(/<notes>([\s\S]*)<\/notes>/.exec(JSON.stringify(request.messages).replace(/\\"/g, '"'))![1]!).older].map((o: { id: number }) => o.id);
        const text = JSON.stringify({ verdicts: ids.map((id: number) => ({ id, verdict, reason: 'test' })) });
        return {
          id: 'msg',
          model: 'fake',
          content: [{ type: 'text', text, citations: null }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        };
      },
    });
    const customer = unique('cust');
    await say(createMemoryActivities({ pool: db.app, embedder, model: says('replaces'), now: () => clock }), customer, 'I live at 22 Oak Road, Leeds');
    await say(createMemoryActivities({ pool: db.app, embedder, model: says('replaces'), now: () => clock }), customer, 'I have moved to 5 Elm Street, York');
    assert.deepEqual(await current(customer), ['I have moved to 5 Elm Street, York']);
    assert.equal(requests.at(-1)!.purpose, 'supersede');
    assert.ok(requests.at(-1)!.output_schema, 'structured output');

    const broken: Model = { label: 'down', offline: false, create: async () => Promise.reject(new Error('overloaded')) };
    const other = unique('cust');
    await say(createMemoryActivities({ pool: db.app, embedder, model: broken, now: () => clock }), other, 'I live at 22 Oak Road, Leeds');
    const outcome = await say(createMemoryActivities({ pool: db.app, embedder, model: broken, now: () => clock }), other, 'I have moved to 5 Elm Street, York');
    assert.equal(outcome.is_error, false, 'the fact is stored even though the judge failed');
    assert.equal((await current(other)).length, 2);
  });
});

describe("the offline model's supersession judgement", () => {
  it('replaces only a different value for the same thing', () => {
    assert.equal(judgeReplacement('Deliveries must go to Block B, not the main gate', 'Deliveries must go to the main gate').verdict, 'replaces');
    assert.equal(judgeReplacement('Please write to me in English from now on', 'I would like replies in Spanish').verdict, 'replaces');
    assert.equal(judgeReplacement('I would now prefer a refund rather than a replacement', 'I prefer a replacement to a refund').verdict, 'replaces');
    assert.equal(judgeReplacement('Weekday evenings now suit me best for deliveries', 'Saturday mornings are the best time for deliveries').verdict, 'replaces');
  });

  it('finds notes on the same topic about different things compatible', () => {
    for (const newer of [
      'My neighbour at number 12 is happy to take in parcels',
      'If nobody is in, the safe place is behind the green bin',
      'My dog barks at couriers, so leave parcels in the porch box',
    ]) {
      assert.equal(judgeReplacement(newer, BLOCK_B).verdict, 'compatible', newer);
    }
    assert.equal(judgeReplacement('Email me rather than phoning', NIGHTS).verdict, 'compatible');
    assert.equal(judgeReplacement('Weekday evenings now suit me best for deliveries', 'The courier usually arrives after six in the evening').verdict, 'compatible');
  });

  it('is unsure when the older note says more than the newer one replaces, and restating is not replacing', () => {
    assert.equal(judgeReplacement('Please call me after 6pm', 'I live at 22 Oak Road, so please do not call me before noon').verdict, 'unsure');
    assert.equal(judgeReplacement('Deliveries must go to block B', BLOCK_B).verdict, 'compatible');
  });
});
