// The patches retired in this release (docs/deploy.md, "Retiring old workflow code"). Their old
// branches are gone: every run takes the path the patch introduced. Histories that began on the
// release before still carry their markers, so each call site says deprecatePatch(name) where it
// said patched(name) — in the same place, under the same conditions, so the markers line up —
// and new runs keep writing the markers, so the release before can still replay them after a
// rollback. Once no run that began before this release is open (the same drain check), the
// next release deletes these calls and this file.

export const RETIRED_PATCHES = {
  historyByReference: 'history-by-reference',
  planCompact: 'history-plan-compact',
  cacheSchedule: 'cache-optimal-schedule',
  deskClose: 'desk-close-status',
  publicReplyCheck: 'public-reply-check',
  localReadTools: 'local-read-tools',
  deskPosts: 'desk-posts',
  deskPostsWorkerDecides: 'desk-posts-worker-decides',
  evidenceFromLog: 'desk-evidence-from-log',
  settleSurvivesOutage: 'settle-survives-outage',
  orderLedger: 'order-ledger',
  deskDeniedNote: 'desk-refund-denied-note',
  closeRetries: 'close-case-retries',
} as const;
