// Pure context functions the Investigation workflow uses to decide what each model call sees:
// clearing old tool results in batches, safe compaction splits, the lean context with cache
// breakpoints, the agent's own notes, token estimates and cost accounting. The entry point;
// each concept lives in its own file.
export * from './accounting';
export * from './agent-notes';
export * from './build-context';
export * from './cache-breakpoints';
export * from './clearing';
export * from './split';
export * from './tokens';
export { CaseNotes, caseNotesJsonSchema, emptyCaseNotes, mergeCaseNotes } from '../schemas/case-notes';
