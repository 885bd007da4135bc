// A write_notes call's input, checked by hand: the workflow runs write_notes itself and its
// bundle carries no schema library (the tool's zod schema in tool-specs.ts uses the same limits).

/** One write_notes call: items to add, and to-do items finished (`done`). */
export interface NotesUpdate {
  found?: string[];
  ruled_out?: string[];
  to_do?: string[];
  done?: string[];
}

/** The lists a write_notes call may fill, the most items one list may add, and the longest item. */
export const NOTES_UPDATE_LISTS = ['found', 'ruled_out', 'to_do', 'done'] as const;
export const NOTES_UPDATE_MAX_ITEMS = 20;
export const NOTE_MAX_CHARS = 300;

/**
 * What is wrong with a write_notes input, as "field: problem" lines (none when it is valid):
 * the same rules as the tool's input schema (tool-specs.ts builds it from these limits), checked without a schema library, so the workflow bundle carries none.
 */
export function notesUpdateProblems(input: unknown): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return ['input: expected an object'];
  const problems: string[] = [];
  for (const list of NOTES_UPDATE_LISTS) {
    const value = (input as Record<string, unknown>)[list];
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      problems.push(`${list}: expected an array of notes`);
      continue;
    }
    if (value.length > NOTES_UPDATE_MAX_ITEMS) problems.push(`${list}: at most ${NOTES_UPDATE_MAX_ITEMS} items, got ${value.length}`);
    value.forEach((item, i) => {
      if (typeof item !== 'string') problems.push(`${list}.${i}: expected a string`);
      else if (item.length < 1 || item.length > NOTE_MAX_CHARS) problems.push(`${list}.${i}: must be 1 to ${NOTE_MAX_CHARS} characters, got ${item.length}`);
    });
  }
  return problems;
}

/** The lists of a valid write_notes input (notesUpdateProblems found nothing), other fields left out. */
export function notesUpdateOf(input: Record<string, unknown>): NotesUpdate {
  const update: NotesUpdate = {};
  for (const list of NOTES_UPDATE_LISTS) if (Array.isArray(input[list])) update[list] = input[list] as string[];
  return update;
}
