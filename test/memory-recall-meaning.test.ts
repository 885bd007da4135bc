import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { withCustomer, type Database } from '../src/db/pool';
import { createLocalEmbedder } from '../src/memory/embed-local';
import type { Embedder } from '../src/memory/embedder';
import { createHybridSearch, fuseByRank, type RankedHit } from '../src/memory/hybrid-search';
import { reindexMemory } from '../src/memory/reindex';
import { openTestDatabase, unique } from './support/db';

// Recall by meaning (issue 11), on the real local MiniLM model and real Postgres: notes are
// embedded when written, recall fuses meaning with words, the start block carries the notes
// relevant to the first message, and reindex embeds what was stored before or by another model.

describe('recall by meaning', () => {
  let db: Database;
  const embedder = createLocalEmbedder();
  let memory: ReturnType<typeof createMemoryActivities>;
  let clock = new Date('2026-10-01T10:00:00.000Z');
  const context = (customerId: string) => ({ customerId, ticketId: 'T', workflowId: 'investigation-T', toolUseId: 'toolu' });
  const say = (customerId: string, fact: string, activities = memory) => {
    clock = new Date(clock.getTime() + 86_400_000);
    return activities.remember({ name: 'remember', input: { fact }, context: context(customerId) });
  };
  const recall = async (customerId: string, query: string) => {
    const outcome = await memory.recall({ name: 'recall', input: { query }, context: context(customerId) });
    assert.equal(outcome.is_error, false, outcome.content);
    return (JSON.parse(outcome.content) as { matches: { text: string }[] }).matches.map((m) => m.text);
  };
  const models = (customerId: string) =>
    withCustomer(
      db.app,
      customerId,
      async (c) =>
        (await c.query<{ embedding_model: string | null; dims: number | null }>('SELECT embedding_model, cardinality(embedding) AS dims FROM memory_notes ORDER BY note_id')).rows,
    );

  before(async () => {
    db = await openTestDatabase();
    memory = createMemoryActivities({ pool: db.app, embedder, now: () => clock });
  });
  after(async () => db.close());

  it('stores a 384-number vector and the model id with every note it writes', async () => {
    const customer = unique('cust');
    await say(customer, 'Deliveries to my flat must go to Block B, not the main gate');
    assert.deepEqual(await models(customer), [{ embedding_model: embedder.id, dims: 384 }]);
  });

  it('finds a note from a question in other words, which full-text search alone misses', async () => {
    const customer = unique('cust');
    for (const fact of [
      'I run a small bakery and order packaging in bulk every month',
      'I have two cats, so the front door cannot be left open',
      'I am away visiting family every August',
    ]) {
      await say(customer, fact);
    }
    const plain = createMemoryActivities({ pool: db.app, now: () => clock });
    const words = await plain.recall({ name: 'recall', input: { query: 'does she have animals at home?' }, context: context(customer) });
    assert.doesNotMatch(words.content, /two cats/, 'full-text alone does not find it');
    assert.match((await recall(customer, 'does she have animals at home?'))[0]!, /two cats/);
    assert.match((await recall(customer, 'what kind of business does she own?'))[0]!, /bakery/);
  });

  it('finds a note said in other words of the trade (apartment for flat, elevator for lift), by words alone too', async () => {
    const customer = unique('cust');
    await say(customer, 'My flat is on the fourth floor and the lift is often out of order');
    await say(customer, 'I volunteer at the library on Tuesday afternoons');
    const plain = createMemoryActivities({ pool: db.app, now: () => clock });
    const words = await plain.recall({ name: 'recall', input: { query: 'is the elevator in her apartment block working?' }, context: context(customer) });
    assert.match(words.content, /fourth floor/, 'full-text search widens the question with synonyms');
    assert.match((await recall(customer, 'is the elevator in her apartment block working?'))[0]!, /fourth floor/);
  });

  it("still finds exact words and numbers first, and never another customer's note", async () => {
    const customer = unique('cust');
    const other = unique('cust');
    await say(customer, 'The parcel for order 4471 was left at the wrong building');
    await say(customer, 'The parcel for order 5102 arrived late');
    await say(other, 'The parcel for order 4471 was lost by the courier');
    const found = await recall(customer, 'order 4471');
    assert.match(found[0]!, /4471 was left at the wrong building/);
    assert.ok(
      found.every((text) => !/lost by the courier/.test(text)),
      'row-level security scopes both lists',
    );
  });

  it('opens a run with the notes most relevant to what the customer just wrote', async () => {
    const customer = unique('cust');
    await say(customer, 'I have two cats, so the front door cannot be left open');
    for (let i = 1; i <= 10; i++) await say(customer, `Asked about the invoice for order ${7000 + i}`);
    const loaded = await memory.loadMemory({ customerId: customer, now: clock.toISOString(), message: 'The driver left my front door wide open and my pets nearly got out!' });
    assert.deepEqual(
      loaded.notes.filter((n) => /cats/.test(n.text)),
      [],
      'not repeated among the other notes',
    );
    assert.match(loaded.block, /Notes relevant to the customer's message, most relevant first:\n- \d{4}-\d{2}-\d{2}: I have two cats/);
    const without = await memory.loadMemory({ customerId: customer, now: clock.toISOString() });
    assert.doesNotMatch(without.block, /two cats/, 'without the message the old note is crowded out by newer ones');
    assert.ok(loaded.tokens <= 500);
  });

  it('ranks the same whether the vector is ready when the search starts or still being made', async () => {
    const customer = unique('cust');
    await say(customer, 'I have two cats, so the front door cannot be left open');
    await say(customer, 'The parcel for order 4471 was left at the wrong building');
    await say(customer, 'Deliveries to my flat must go to Block B, not the main gate');
    const search = createHybridSearch({ embedder });
    const query = { customerId: customer, text: 'where should couriers take her parcels?', now: clock.toISOString(), limit: 3 };
    const [vector] = await embedder.embed([query.text], 'query');
    const ready = await withCustomer(db.app, customer, (client) => search.withVector(() => Promise.resolve(vector!)).search(client, query));
    // Late: the lexical list is read while the vector is awaited, the semantic list after it.
    const late = await withCustomer(db.app, customer, (client) =>
      search.withVector(() => new Promise<number[]>((resolve) => setTimeout(() => resolve(vector!), 50))).search(client, query),
    );
    assert.ok(ready.length >= 2, JSON.stringify(ready));
    assert.deepEqual(late, ready);
    const failed = await withCustomer(db.app, customer, (client) =>
      search.withVector(() => new Promise<number[]>((_, reject) => setTimeout(() => reject(new Error('model gone')), 20))).search(client, { ...query, text: 'wrong building' }),
    );
    assert.match(failed[0]!.text, /wrong building/, 'a failed embedding leaves recall to words');
  });

  it('reindex embeds notes stored without a vector and re-embeds those of another model', async () => {
    const customer = unique('cust');
    const stale: Embedder = { id: 'test:stale-model', dimensions: 3, label: 'stale', embed: async (texts) => texts.map(() => [1, 0, 0]) };
    await say(customer, 'I have two cats, so the front door cannot be left open', createMemoryActivities({ pool: db.app, embedder: stale, now: () => clock }));
    await say(customer, 'I am away visiting family every August', createMemoryActivities({ pool: db.app, now: () => clock }));
    assert.deepEqual(await models(customer), [
      { embedding_model: 'test:stale-model', dims: 3 },
      { embedding_model: null, dims: null },
    ]);
    const report = await reindexMemory({ admin: db.admin, app: db.app, embedder, customerId: customer });
    assert.equal(report.notes, 2);
    assert.deepEqual(await models(customer), [
      { embedding_model: embedder.id, dims: 384 },
      { embedding_model: embedder.id, dims: 384 },
    ]);
    assert.match((await recall(customer, 'does she have animals at home?'))[0]!, /two cats/);
    assert.equal((await reindexMemory({ admin: db.admin, app: db.app, embedder, customerId: customer })).notes, 0, 'a second run has nothing to do');
  });

  it('embeds a recorded case, so a past case is found by meaning too', async () => {
    const customer = unique('cust');
    await memory.recordCase({
      customerId: customer,
      workflowId: 'investigation-C1',
      ticketId: 'C1',
      orderIds: ['4471'],
      summary: 'Parcel left at the wrong building',
      resolution: 'refunded in full',
      closedOn: '2026-10-02',
    });
    const found = await recall(customer, 'was a package ever delivered to the incorrect address?');
    assert.match(found[0]!, /order 4471; Parcel left at the wrong building; resolution: refunded in full/);
  });
});

describe('reciprocal rank fusion', () => {
  const hit = (id: number, score: number, at = '2026-10-01T00:00:00.000Z'): RankedHit => ({ source: 'note', id, kind: 'fact', text: `n${id}`, date: at.slice(0, 10), at, score });

  it('puts a note both lists rank high above one only a single list ranks first', () => {
    const fused = fuseByRank([hit(1, 1.2), hit(2, 0.9)], [hit(3, 0.6), hit(2, 0.55)]);
    assert.deepEqual(
      fused.map((h) => h.id),
      [2, 3, 1],
    );
  });

  it('ignores weak lexical matches, which are noise for a question in other words', () => {
    const fused = fuseByRank([hit(1, 0.3)], [hit(2, 0.4), hit(3, 0.35), hit(4, 0.3)]);
    assert.deepEqual(
      fused.map((h) => h.id),
      [2, 3, 4],
    );
  });

  it('orders equals newest first', () => {
    const tie = fuseByRank([hit(1, 1, '2026-01-01T00:00:00.000Z')], [hit(2, 0.5, '2026-05-01T00:00:00.000Z')], { semanticWeight: 1 });
    assert.deepEqual(
      tie.map((h) => h.id),
      [2, 1],
    );
  });
});
