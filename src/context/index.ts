// The working-memory kernel: pure, sandbox-safe functions that decide what each model call sees
// (clearing old tool results in batches, safe compaction splits, the lean context with cache
// breakpoints, the agent's own notes, token estimates, cost accounting, transcript helpers and
// the wire formats). Imported by the workflow, the activities, the offline model and the benches
// alike; it imports nothing but schemas. Each concept lives in its own file.
export * from './accounting';
export * from './agent-notes';
export * from './build-context';
export * from './cache-breakpoints';
export * from './clearing';
export * from './excerpt';
export * from './split';
export * from './tokens';
export * from './transcript';
export * from './wire';
export { CaseNotes, caseNotesJsonSchema, emptyCaseNotes, mergeCaseNotes } from '../schemas/case-notes';
export * from './notes-transcript';
export * from './references';
