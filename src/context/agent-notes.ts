import type { AgentNotes } from '../schemas/investigation';

export type { AgentNotes } from '../schemas/investigation';

import type { NotesUpdate } from '../schemas/notes-update';

export type { NotesUpdate } from '../schemas/notes-update';

/** Notes with nothing in them. */
export const EMPTY_AGENT_NOTES: AgentNotes = Object.freeze({ found: [], ruled_out: [], to_do: [] });

const key = (item: string) => item.trim().replace(/\s+/g, ' ').toLowerCase();

function union(list: readonly string[], additions: readonly string[] = []): string[] {
  const seen = new Set(list.map(key));
  const out = [...list];
  for (const item of additions) {
    const text = item.trim();
    if (!text || seen.has(key(text))) continue;
    seen.add(key(text));
    out.push(text);
  }
  return out;
}

/**
 * Notes after one update, as a new object: additions appended once each (repeats ignored,
 * order kept), and to-do items named in `done` removed. A `done` item may also be new work
 * finished, so it is never an error.
 */
export function applyNotesUpdate(notes: AgentNotes, update: NotesUpdate): AgentNotes {
  const finished = new Set((update.done ?? []).map(key));
  return {
    found: union(notes.found, update.found),
    ruled_out: union(notes.ruled_out, update.ruled_out),
    to_do: union(notes.to_do, update.to_do).filter((item) => !finished.has(key(item))),
  };
}

/** The notes as the model reads them: three headed lists, or a line saying there are none. */
export function renderNotes(notes: AgentNotes): string {
  const sections: Array<[string, string[]]> = [
    ['Found', notes.found],
    ['Ruled out', notes.ruled_out],
    ['To do', notes.to_do],
  ];
  const lines = sections.filter(([, items]) => items.length).flatMap(([title, items]) => [`${title}:`, ...items.map((i) => `- ${i}`)]);
  return lines.length ? lines.join('\n') : 'No notes yet.';
}

/** True when the notes hold nothing. */
export function notesAreEmpty(notes: AgentNotes): boolean {
  return notes.found.length + notes.ruled_out.length + notes.to_do.length === 0;
}
