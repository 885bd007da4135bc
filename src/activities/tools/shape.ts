import { ToolError } from '../../schemas/tool-call';

// Helpers every tool uses to keep its result small and JSON-safe (docs/architecture.md, "Working memory"):
// limited lists that say what they left out, distances. Row parsers live in db/rows.ts and
// excerpts in context/excerpt.ts, since memory shapes its text the same way.

/** Where a page sits in a list: the slice bounds and a sentence the model can read. */
export interface PageWindow {
  offset: number;
  limit: number;
  showing: string;
  next_page: number | null;
}

/**
 * Works out page `page` of `total` items, `size` at a time. `noun` names the items ("events").
 * A page past the end is a ToolError saying how many pages exist, so the model stops asking.
 */
export function pageWindow(total: number, page: number, size: number, noun: string, order = 'newest first'): PageWindow {
  const pages = Math.max(1, Math.ceil(total / size));
  if (total === 0) return { offset: 0, limit: size, showing: `no ${noun}`, next_page: null };
  if (page > pages) {
    throw new ToolError(`Page ${page} is past the end: there are ${total} ${noun} on ${pages} page${pages === 1 ? '' : 's'}.`);
  }
  const offset = (page - 1) * size;
  const last = Math.min(total, offset + size);
  return {
    offset,
    limit: size,
    showing: `${noun} ${offset + 1}-${last} of ${total}, ${order}`,
    next_page: page < pages ? page + 1 : null,
  };
}

/** Great-circle distance in metres between two points (haversine; plenty for "is this the address?"). */
export function distanceMetres(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = (deg: number) => (deg * Math.PI) / 180;
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.sqrt(h));
}

/** A distance as a person would say it: "140 m" or "2.4 km". */
export function describeDistance(metres: number): string {
  return metres < 1000 ? `${Math.round(metres / 10) * 10} m` : `${(metres / 1000).toFixed(1)} km`;
}
