import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { estimateTokens } from '../src/context/tokens';
import { PROFILE_FIELDS } from '../src/memory/classify';
import { LEFT_OUT_LINE, MAX_MEMORY_TOKENS, renderMemoryBlock, type MemoryParts } from '../src/memory/render';
import type { CaseRecord, Note, Profile } from '../src/memory/schemas';

// The start-of-run memory block over random memories: any number of notes, cases and
// commitments, texts from a word to far past any line's limit, cases naming many orders.
// Whatever is stored, the block fits its budget, says when it left something out, and gives
// up the least useful lines first.

const NOW = '2026-10-20T09:00:00.000Z';

const words = fc.array(fc.constantFrom('parcel', 'Block', 'B', 'courier', 'refund', 'gate', 'evenings', 'please', 'never', 'the', 'neighbour', '4471', 'x'.repeat(30)), {
  minLength: 1,
  maxLength: 80,
  size: 'max',
});
const text = fc.oneof(
  words.map((w) => w.join(' ')),
  fc.string({ minLength: 1, maxLength: 400, size: 'max' }),
);
const day = fc.integer({ min: 0, max: 400 }).map((n) => new Date(Date.parse('2025-09-01T10:00:00.000Z') + n * 86_400_000).toISOString());

let nextId = 1;
const note = (kind: Note['kind']) =>
  fc.record({ text, written_at: day, due_on: fc.option(day.map((d) => d.slice(0, 10))) }).map((n): Note => ({
    note_id: nextId++,
    kind,
    subject: null,
    text: n.text,
    source_run: 'investigation-T1',
    written_at: n.written_at,
    expires_at: '2027-10-14T10:00:00.000Z',
    due_on: kind === 'commitment' ? n.due_on : null,
    superseded_at: null,
    superseded_by: null,
    corrected_at: null,
  }));
const caseRecord = fc
  .record({ problem: text, resolution: fc.oneof(text, fc.constant('')), orders: fc.array(fc.string({ minLength: 1, maxLength: 60 }), { maxLength: 12, size: 'max' }), closed: day })
  .map((c): CaseRecord => ({
    case_id: nextId++,
    source_run: 'investigation-T1',
    ticket_id: 'T1',
    order_ids: c.orders,
    problem: c.problem,
    resolution: c.resolution,
    closed_on: c.closed.slice(0, 10),
    recorded_at: c.closed,
  }));
const profile = fc.subarray([...PROFILE_FIELDS]).chain((fields) =>
  fc.tuple(...fields.map(() => fc.tuple(text, day))).map((values): Profile => {
    const out: Profile = {};
    fields.forEach((field, i) => {
      const [value, written_at] = values[i]!;
      out[field] = { field, value, note_id: nextId++, source_run: 'r', written_at, expires_at: '2027-10-14T10:00:00.000Z' };
    });
    return out;
  }),
);
const memory = fc.record({
  profile,
  recentCases: fc.array(caseRecord, { maxLength: 3, size: 'max' }),
  commitments: fc.array(note('commitment'), { maxLength: 5, size: 'max' }),
  notes: fc.array(fc.oneof(note('fact'), note('preference'), note('customer_claim')), { maxLength: 8, size: 'max' }),
  relevant: fc.array(note('fact'), { maxLength: 3, size: 'max' }),
});

const shownCount = (p: MemoryParts) => Object.keys(p.profile).length + p.recentCases.length + p.commitments.length + p.notes.length + (p.relevant?.length ?? 0);
const isPrefix = <T>(kept: readonly T[], all: readonly T[]) => kept.every((item, i) => item === all[i]);

describe('the memory block under any memory', () => {
  it(`never passes its ${MAX_MEMORY_TOKENS}-token budget, and is one well-formed block`, () => {
    fc.assert(
      fc.property(memory, (m) => {
        const { block, tokens } = renderMemoryBlock({ ...m, now: NOW });
        assert.ok(tokens <= MAX_MEMORY_TOKENS, `${tokens} tokens`);
        assert.equal(tokens, estimateTokens(block));
        assert.equal(block.match(/<customer_memory>/g)?.length, 1);
        assert.equal(block.match(/<\/customer_memory>/g)?.length, 1);
        assert.ok(block.startsWith('<customer_memory>\n') && block.endsWith('\n</customer_memory>'));
      }),
      { numRuns: 600 },
    );
  });

  it('keeps any smaller budget it can hold, too', () => {
    fc.assert(
      fc.property(memory, fc.integer({ min: 80, max: 1200 }), (m, budget) => {
        assert.ok(renderMemoryBlock({ ...m, now: NOW }, budget).tokens <= budget);
      }),
      { numRuns: 300 },
    );
  });

  it('renders a memory that fits whole, and says so whenever it left something out or cut it short', () => {
    fc.assert(
      fc.property(memory, (m) => {
        const input: MemoryParts = { ...m, now: NOW };
        const generous = renderMemoryBlock(input, 100_000);
        assert.ok(!generous.block.includes(LEFT_OUT_LINE));
        const rendered = renderMemoryBlock(input);
        if (generous.tokens <= MAX_MEMORY_TOKENS) assert.equal(rendered.block, generous.block);
        else assert.ok(rendered.block.includes(LEFT_OUT_LINE));
      }),
      { numRuns: 400 },
    );
  });

  it('gives up the least useful lines first: other notes, then older cases, and the profile last', () => {
    fc.assert(
      fc.property(memory, (m) => {
        const input: MemoryParts = { ...m, now: NOW };
        const { parts: kept } = renderMemoryBlock(input);
        // What stays is always the front of each list: newest notes and cases, most relevant first.
        assert.ok(
          isPrefix(kept.notes, m.notes) && isPrefix(kept.recentCases, m.recentCases) && isPrefix(kept.commitments, m.commitments) && isPrefix(kept.relevant ?? [], m.relevant),
        );
        // An older note is shown only when nothing more useful was left out.
        if (kept.notes.length) {
          assert.equal(kept.recentCases.length, m.recentCases.length);
          assert.equal(kept.relevant?.length ?? 0, m.relevant.length);
          assert.equal(kept.commitments.length, m.commitments.length);
        }
        // The newest case and the most relevant note go only after every other note and case.
        if (m.recentCases.length && !kept.recentCases.length) assert.equal(shownCount(kept), Object.keys(kept.profile).length);
        if (m.relevant.length && !kept.relevant?.length) assert.equal(kept.notes.length + kept.recentCases.length - Math.min(1, kept.recentCases.length), 0);
        // A profile field is left out only when nothing else is shown.
        if (Object.keys(kept.profile).length < Object.keys(m.profile).length) assert.equal(shownCount(kept), Object.keys(kept.profile).length);
      }),
      { numRuns: 600 },
    );
  });

  it('keeps the whole profile, the newest case and the most relevant note, cut short, when everything else is long', () => {
    const long = 'Deliveries must go to Block B, the side entrance by the bike racks, never the main gate, '.repeat(5);
    const profile: Profile = {};
    for (const field of PROFILE_FIELDS) profile[field] = { field, value: long, note_id: 1, source_run: 'r', written_at: NOW, expires_at: NOW };
    const bulky = (id: number, kind: Note['kind']): Note => ({
      note_id: id,
      kind,
      subject: null,
      text: long,
      source_run: 'r',
      written_at: NOW,
      expires_at: NOW,
      due_on: null,
      superseded_at: null,
      superseded_by: null,
      corrected_at: null,
    });
    const aCase: CaseRecord = {
      case_id: 9,
      source_run: 'r',
      ticket_id: 'T',
      order_ids: ['4471', '4472', '4473', '4474', '4475'],
      problem: long,
      resolution: long,
      closed_on: '2026-10-14',
      recorded_at: NOW,
    };
    const {
      parts: kept,
      tokens,
      block,
    } = renderMemoryBlock({
      profile,
      recentCases: [aCase, { ...aCase, case_id: 10 }],
      commitments: [bulky(20, 'commitment')],
      notes: [bulky(21, 'fact'), bulky(22, 'fact')],
      relevant: [bulky(23, 'fact'), bulky(24, 'fact')],
      now: NOW,
    });
    assert.ok(tokens <= MAX_MEMORY_TOKENS, `${tokens} tokens`);
    assert.deepEqual(Object.keys(kept.profile).sort(), [...PROFILE_FIELDS].sort());
    assert.deepEqual(
      kept.recentCases.map((c) => c.case_id),
      [9],
    );
    assert.deepEqual(
      kept.relevant?.map((n) => n.note_id),
      [23],
    );
    assert.equal(kept.notes.length, 0);
    assert.match(block, /order 4471, order 4472, 3 more: Deliveries/);
    assert.match(block, /…/);
  });
});
