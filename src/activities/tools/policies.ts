import type { Commerce, PolicySource, ShopPolicy } from '../../commerce/shop';
import { ToolError } from '../../schemas/tool-call';
import { defineTool } from './define';

/** One policy as lookup_policy reads it. */
export type PolicyRow = ShopPolicy;

/** lookup_policy's result: the one best-matching policy, in full. */
export interface PolicyResult {
  topic: string;
  title: string;
  text: string;
}

const STOPWORDS = new Set('a an and are at be but by for from i in is it its me my of on or our that the this to was were with'.split(' '));

function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

function containsPhrase(haystack: string[], phrase: string[]): boolean {
  if (phrase.length === 0 || phrase.length > haystack.length) return false;
  for (let i = 0; i + phrase.length <= haystack.length; i++) {
    if (phrase.every((w, j) => haystack[i + j] === w)) return true;
  }
  return false;
}

/**
 * How well a policy matches the words of a query: each keyword phrase found in the query counts
 * three per word (phrases are what tell "wrong building" from "address wrong"), and each query
 * word in the policy's title, topic or keywords counts one.
 */
export function policyScore(query: string, policy: PolicyRow): number {
  const asked = words(query);
  const phraseScore = policy.keywords.reduce((n, k) => {
    const phrase = words(k);
    return containsPhrase(asked, phrase) ? n + 3 * phrase.length : n;
  }, 0);
  const vocabulary = new Set([policy.title, policy.topic.replace(/_/g, ' '), ...policy.keywords].flatMap(words));
  const wordScore = new Set(asked.filter((w) => !STOPWORDS.has(w) && vocabulary.has(w))).size;
  return phraseScore + wordScore;
}

/** Below this a match rests on one shared word ("order", "parcel"): not a match. */
export const MIN_POLICY_SCORE = 2;

/** The policy that best matches `query`, or undefined when nothing matches (ties go to the first topic). */
export function bestPolicy(query: string, policies: readonly PolicyRow[]): PolicyRow | undefined {
  let best: { policy: PolicyRow; score: number } | undefined;
  for (const policy of policies) {
    const score = policyScore(query, policy);
    if (score >= MIN_POLICY_SCORE && (!best || score > best.score)) best = { policy, score };
  }
  return best?.policy;
}

/** lookup_policy: the best match for a situation; a ToolError naming every topic when none matches. */
export async function lookupPolicy(source: PolicySource, query: string): Promise<PolicyResult> {
  const policies = await source.policies();
  const match = bestPolicy(query, policies);
  if (!match) {
    const topics = policies.map((p) => `"${p.title}"`).join(', ');
    throw new ToolError(`No policy matches "${query}". Policies exist for: ${topics}. Ask again using words from one of these.`);
  }
  return { topic: match.topic, title: match.title, text: match.body };
}

/** lookup_policy, read through the shop's policy source. */
export function createPolicyTools(deps: { commerce: Commerce }) {
  return {
    lookup_policy: defineTool('lookup_policy', ({ topic }) => lookupPolicy(deps.commerce.policies, topic)),
  };
}
