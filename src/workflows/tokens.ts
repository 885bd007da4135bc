/**
 * Offline token estimate: about four characters a token, the usual rule of thumb for English
 * and JSON. Used where no API `usage` exists (the offline model, benchmarks, size budgets).
 */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}
