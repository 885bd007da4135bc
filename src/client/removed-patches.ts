import type { LoadedDataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { decodeHistoryPayloads } from '../temporal/history-payloads';

// The patches this release deleted from the workflow code, and how to tell the runs they strand.
// A patch goes patched('x') → deprecatePatch('x') → removed. A history that recorded the marker
// through deprecatePatch flags it deprecated, and code without the call skips it on replay; a
// history that recorded it through patched() does not replay once the call is gone (core meets a
// marker no command answers). The investigation is auto-upgrade, so such a run, still open when
// this release becomes current, stalls at its next workflow task: it must close first
// (docs/deploy.md, "Retiring old workflow code"). Continue-as-new starts a new history, so only
// the current run's markers count.

/** The patches whose calls this release removed (they were deprecatePatch calls in the release before). */
export const REMOVED_PATCHES: readonly string[] = [
  'history-by-reference',
  'history-plan-compact',
  'cache-optimal-schedule',
  'desk-close-status',
  'public-reply-check',
  'local-read-tools',
  'desk-posts',
  'desk-posts-worker-decides',
  'desk-evidence-from-log',
  'settle-survives-outage',
  'order-ledger',
  'desk-refund-denied-note',
  'close-case-retries',
];

/** The marker name core gives a patch marker. */
const PATCH_MARKER = 'core_patch';

/** One patch marker of a history: the patch id and whether deprecatePatch recorded it. */
export interface PatchMarker {
  id: string;
  deprecated: boolean;
}

/** The patch markers a history recorded, in order (core writes `patch-data` as {"id", "deprecated"}). */
export async function patchMarkers(converter: LoadedDataConverter, events: readonly temporal.api.history.v1.IHistoryEvent[]): Promise<PatchMarker[]> {
  const markers: PatchMarker[] = [];
  for (const event of events) {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== PATCH_MARKER) continue;
    const [data] = (await decodeHistoryPayloads(converter, marker.details?.['patch-data']?.payloads)) as (Partial<PatchMarker> | undefined)[];
    if (typeof data?.id === 'string') markers.push({ id: data.id, deprecated: data.deprecated === true });
  }
  return markers;
}

/** The removed patches whose markers `markers` recorded without the deprecated flag, each once, in order: a history holding any does not replay on this release. */
export function strandingPatches(markers: readonly PatchMarker[], removed: readonly string[] = REMOVED_PATCHES): string[] {
  const stranding = markers.filter((m) => !m.deprecated && removed.includes(m.id)).map((m) => m.id);
  return [...new Set(stranding)];
}
