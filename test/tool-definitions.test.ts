import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { TOOL_DEFINITIONS_FILE, toolDefinitionsText } from '../scripts/tool-definitions';
import { notesUpdateOf, notesUpdateProblems, NOTE_MAX_CHARS, NOTES_UPDATE_MAX_ITEMS } from '../src/schemas/notes-update';
import { isOfferedTool, TOOL_DEFINITIONS } from '../src/schemas/tool-definitions';
import { isToolName, TOOL_SPECS, toolDefinitions } from '../src/schemas/tool-specs';

// The tool definitions are generated at build time (scripts/tool-definitions.ts) and read by the
// workflow and the model activity; write_notes is checked in the workflow by hand, without zod.
// Both must say exactly what the zod specs say.

test('the committed tool definitions are the ones the specs generate, byte for byte', () => {
  assert.equal(readFileSync(TOOL_DEFINITIONS_FILE, 'utf8'), toolDefinitionsText(), 'run `npx tsx scripts/tool-definitions.ts` (npm run build does) after changing a tool spec');
  assert.deepEqual(TOOL_DEFINITIONS, toolDefinitions());
});

test('the offered names are the specs’ names', () => {
  for (const name of Object.keys(TOOL_SPECS)) assert.ok(isOfferedTool(name), name);
  for (const name of ['nonsense', 'constructor', '__proto__', 'toString', '']) assert.equal(isOfferedTool(name), isToolName(name), name);
});

const item = fc.oneof(fc.string({ minLength: 0, maxLength: NOTE_MAX_CHARS + 2 }), fc.integer(), fc.constant(null));
const list = fc.oneof(fc.array(item, { maxLength: NOTES_UPDATE_MAX_ITEMS + 2 }), fc.string(), fc.constant(null), fc.constant(undefined));
const notesInput = fc.oneof(fc.record({ found: list, ruled_out: list, to_do: list, done: list, other: fc.anything() }, { requiredKeys: [] }), fc.anything());

test('write_notes input: the hand check accepts what the zod schema accepts, and reads the same lists', () => {
  fc.assert(
    fc.property(notesInput, (input) => {
      const parsed = TOOL_SPECS.write_notes.input.safeParse(input);
      const problems = notesUpdateProblems(input);
      assert.equal(
        problems.length === 0,
        parsed.success,
        `zod ${parsed.success ? 'accepts' : 'refuses'} ${JSON.stringify(input)}; the hand check says ${problems.join('; ') || 'nothing'}`,
      );
      // As JSON (what a tool_use input is): zod keeps a key given as undefined, the hand check leaves it out.
      const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
      if (parsed.success) assert.deepEqual(json(notesUpdateOf(input as Record<string, unknown>)), json(parsed.data));
    }),
    { numRuns: 2000 },
  );
});

test('a bad write_notes input is refused naming the field and what is wrong', () => {
  assert.deepEqual(notesUpdateProblems({ found: ['ok', ''], to_do: 'x' }), ['found.1: must be 1 to 300 characters, got 0', 'to_do: expected an array of notes']);
  assert.deepEqual(notesUpdateProblems(['found']), ['input: expected an object']);
  assert.match(notesUpdateProblems({ done: Array.from({ length: 21 }, () => 'a') })[0]!, /done: at most 20 items, got 21/);
});
