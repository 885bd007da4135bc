// Short excerpts: a tool result or a memory block quotes long text by its start, cut at a word.

/** The first ~`max` characters of `text`, cut at a word boundary, whitespace collapsed, "…" when cut. */
export function excerpt(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,.;:]+$/, '')}…`;
}
