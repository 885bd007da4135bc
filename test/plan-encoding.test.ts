import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildContext } from '../src/context/build-context';
import { decodeLayout, decodeSeqs, encodeLayout, encodeSeqs, PlanEncodingError } from '../src/context/plan-encoding';
import type { LayoutMessage } from '../src/schemas/transcript-log';
import { seededRng } from '../src/dev/rng';

// The compact plan's numbers: whatever layout or set of entries the workflow encodes, the
// activity decodes the very same one, so the model is sent exactly what it was sent before.

/** A layout as skeletons produce them: numbers mostly climbing by one, with gaps, repairs that go back, and empty messages. */
function randomLayout(next: () => number): LayoutMessage[] {
  let seq = 1 + Math.floor(next() * 5000);
  const layout: LayoutMessage[] = [];
  const messages = Math.floor(next() * 40);
  for (let m = 0; m < messages; m++) {
    const seqs: number[] = [];
    const blocks = Math.floor(next() * 5);
    for (let b = 0; b < blocks; b++) {
      const r = next();
      seq = r < 0.7 ? seq + 1 : r < 0.9 ? seq + 2 + Math.floor(next() * 70) : Math.max(1, seq - Math.floor(next() * 300));
      seqs.push(seq);
    }
    layout.push({ role: m % 2 === 0 ? 'user' : 'assistant', seqs });
  }
  return layout;
}

// Each case is drawn from its own seed, so a failing one is replayed from the seed its message names.
test('any layout decodes to itself, messages, roles and entries in order', () => {
  for (let seed = 1; seed <= 2000; seed++) {
    const layout = randomLayout(seededRng(seed).next);
    assert.deepEqual(decodeLayout(encodeLayout(layout)), layout, `seed ${seed}`);
  }
});

test('any list of entry numbers decodes to itself', () => {
  for (let seed = 1; seed <= 2000; seed++) {
    const next = seededRng(seed).next;
    const seqs = randomLayout(next).flatMap((m) => m.seqs);
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    assert.deepEqual(decodeSeqs(encodeSeqs(seqs)), seqs, `seed ${seed}`);
    assert.deepEqual(decodeSeqs(encodeSeqs(sorted)), sorted, `seed ${seed}, sorted`);
  }
});

test('a live tail of consecutive entries costs a few characters a message', () => {
  const layout: LayoutMessage[] = [{ role: 'user', seqs: [4100] }];
  for (let seq = 4101; seq < 4160; seq += 3) layout.push({ role: 'assistant', seqs: [seq, seq + 1] }, { role: 'user', seqs: [seq + 2] });
  const text = encodeLayout(layout);
  assert.equal(text.slice(0, 12), 'u4100a1.2u1a');
  assert.ok(text.length < JSON.stringify(layout).length / 5, `${text.length} characters against ${JSON.stringify(layout).length} as JSON`);
  assert.equal(encodeSeqs([4, 5, 6, 9]), '4.3,3');
});

test('the request built from cleared entries is the request built from cleared ids', () => {
  const messages = [
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'Where is order 5102?' }] },
    { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't1', name: 'get_order', input: {} }] },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: 'order body' }] },
    { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't2', name: 'get_order', input: {} }] },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't2', content: 'second body' }] },
  ];
  const idOfSeq = new Map([[3, 't1']]);
  const ids = decodeSeqs(encodeSeqs([3])).map((seq) => idOfSeq.get(seq)!);
  const base = { system: 'rules', tools: [] };
  assert.deepEqual(buildContext({ ...base, messages, clearedIds: ids }), buildContext({ ...base, messages, clearedIds: ['t1'] }));
  assert.notDeepEqual(buildContext({ ...base, messages, clearedIds: ids }), buildContext({ ...base, messages, clearedIds: [] }));
});

test('a string that is not a layout or a run of numbers is refused, naming it', () => {
  assert.throws(() => decodeLayout('u1x2'), PlanEncodingError);
  assert.throws(
    () => decodeSeqs('1,,2'),
    (e) => e instanceof PlanEncodingError && /"" is not a run/.test(e.message),
  );
  assert.throws(() => decodeSeqs('4.1'), PlanEncodingError);
  assert.throws(() => encodeLayout([{ role: 'system', seqs: [1] }]), PlanEncodingError);
});
