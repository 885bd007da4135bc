import { capResult } from '../../context/result-cap';
import { ToolError } from '../../schemas/tool-call';
import { pageWindow } from './shape';

// An MCP tool's result, shaped as casework's own tools shape theirs: a long list is paged and
// the result says which part it shows ("claims 1-10 of 45"), and the whole is held to the size
// cap with a cut marker. Pure.

/** Items of a long list shown per page. */
export const MCP_PAGE_SIZE = 10;

/** The longest array among an object's own fields, when it is longer than a page. */
function longestList(value: Record<string, unknown>): string | undefined {
  let best: string | undefined;
  for (const [key, field] of Object.entries(value)) {
    if (Array.isArray(field) && field.length > MCP_PAGE_SIZE && (!best || field.length > (value[best] as unknown[]).length)) best = key;
  }
  return best;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The text the model reads for an MCP result: page `page` of its longest list when it has one
 * longer than a page (a top-level array, or an object's array field), then capped. A page past
 * the end, or a page of a result with no long list, is a ToolError saying so.
 */
export function shapeMcpResult(text: string, page = 1): string {
  const value = parsed(text);
  if (Array.isArray(value) && value.length > MCP_PAGE_SIZE) {
    const w = pageWindow(value.length, page, MCP_PAGE_SIZE, 'items', "in the server's order");
    return capResult(JSON.stringify({ items: value.slice(w.offset, w.offset + w.limit), showing: w.showing, next_page: w.next_page }));
  }
  const list = value && typeof value === 'object' && !Array.isArray(value) ? longestList(value as Record<string, unknown>) : undefined;
  if (list) {
    const object = value as Record<string, unknown>;
    const items = object[list] as unknown[];
    const w = pageWindow(items.length, page, MCP_PAGE_SIZE, list, "in the server's order");
    return capResult(JSON.stringify({ ...object, [list]: items.slice(w.offset, w.offset + w.limit), showing: w.showing, next_page: w.next_page }));
  }
  if (page > 1) throw new ToolError(`Page ${page} is past the end: this result has no list longer than ${MCP_PAGE_SIZE} items, so it is all on page 1.`);
  return capResult(text);
}
