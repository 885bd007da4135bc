import type { ModelReply, ModelRequest } from '../../schemas/model';
import { estimateTokens } from '../../context/tokens';
/** The model name on the offline judge's replies. */
const OFFLINE_JUDGE_MODEL = 'offline-investigator (deterministic test double)';

// The offline test double's answer to "does the newer note replace the older one?" (request
// purpose 'supersede', built by src/memory/supersede-judge.ts). Deterministic rules, not a
// model: a note is read as the values it states for a few facets a support team tracks
// (where deliveries go, the safe place, the home address, the contact channel, the hours one
// may call, the delivery days, the preferred resolution, the language, a favourite). The
// newer note replaces the older only when they state a different value for a facet they
// share and the older states nothing the newer leaves out; two notes with no facet in common
// are compatible; anything else is unsure, and unsure keeps both.

/** One facet a note states and its value, normalised. */
export interface StatedValue {
  facet: string;
  value: string;
}

const LANGUAGES =
  'english|spanish|french|german|italian|portuguese|dutch|polish|romanian|greek|turkish|arabic|hindi|urdu|bengali|punjabi|gujarati|tamil|welsh|irish|chinese|mandarin|cantonese|japanese|korean|russian|ukrainian|swedish|danish|norwegian|finnish';
const CHANNELS: Record<string, string> = {
  email: 'email',
  emailing: 'email',
  'e-mail': 'email',
  emails: 'email',
  phone: 'phone',
  phoning: 'phone',
  call: 'phone',
  calling: 'phone',
  ring: 'phone',
  ringing: 'phone',
  telephone: 'phone',
  text: 'text',
  texting: 'text',
  sms: 'text',
  message: 'text',
  whatsapp: 'whatsapp',
  post: 'post',
  letter: 'post',
};
const RESOLUTIONS: Record<string, string> = {
  refund: 'refund',
  refunds: 'refund',
  'money back': 'refund',
  replacement: 'replacement',
  replacements: 'replacement',
  'store credit': 'credit',
  credit: 'credit',
  voucher: 'credit',
  vouchers: 'credit',
  exchange: 'replacement',
  repair: 'repair',
};
const TIMES = /\b((?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekdays?|weekends?|mornings?|afternoons?|evenings?|nights?|lunchtimes?)\b/g;

/** Cuts the part of a clause that names what is being replaced ("not the main gate", "rather than phoning"). */
function mainClause(text: string): string {
  return text.split(/,?\s+(?:not|rather than|instead of|but not|and not|as opposed to)\b|[,;.](?!\d)|\s+(?:and|so|because|as|but|when|if)\s/)[0] ?? text;
}

/** A value as compared: lower case, no articles or "now", single spaces. */
function normaliseValue(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .replace(/\b(?:the|a|an|my|our|now|from now on|on|please|always|only|instead)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The facets `note` states a value for. Exported for tests. */
export function statedValues(note: string): StatedValue[] {
  const text = ` ${note.toLowerCase().replace(/[’']/g, "'")} `;
  const found: StatedValue[] = [];
  const add = (facet: string, raw: string | undefined) => {
    const value = raw === undefined ? '' : normaliseValue(mainClause(raw));
    if (value && !found.some((f) => f.facet === facet)) found.push({ facet, value });
  };

  // Where deliveries go: "deliveries (to my flat) must go to X", "deliver (them) to X", "send parcels to X".
  const destination =
    /\bdeliver(?:y|ies)\b[^.]*?\b(?:must|should|need to|have to|can|to)?\s*(?:now\s+)?(?:go|be (?:sent|taken|brought|delivered|left))\s+(?:to|at)\s+([^.]+)/.exec(text) ??
    /\b(?:please\s+)?(?:deliver|send|bring)\s+(?:my\s+|all\s+|any\s+)?(?:parcels|packages|orders|deliveries|them|it|everything)?\s*(?:now\s+)?to\s+([^.]+)/.exec(text);
  if (destination && !/\b(?:do not|don't|never)\s+(?:deliver|send|bring)/.test(text)) add('delivery destination', destination[1]);

  // The safe place: "the safe place is (now) X".
  const safe = /\bsafe place\s+(?:is|should be|will be)\s+(?:now\s+)?([^.]+)/.exec(text);
  if (safe) add('safe place', safe[1]);

  // The home address: "I live at X", "I have moved to X", "my (new) address is X".
  const address =
    /\b(?:i|we)\s+(?:now\s+)?(?:live|am living|are living)\s+(?:at|in)\s+([^.]+)/.exec(text) ??
    /\b(?:i|we)(?:'ve| have)?\s+(?:just\s+|now\s+)?moved\s+(?:house\s+)?to\s+([^.]+)/.exec(text) ??
    /\bmy\s+(?:new\s+|home\s+)?address\s+is\s+(?:now\s+)?([^.]+)/.exec(text);
  if (address) add('home address', address[1]);

  // The language of replies.
  const language = new RegExp(`\\b(?:in|speaks?|reply in|write in)\\s+(${LANGUAGES})\\b`).exec(text);
  if (language) add('language', language[1]);

  // The contact channel, stated positively: "email me", "contact me by phone", "prefers email over phone".
  const channelWords = Object.keys(CHANNELS).join('|');
  const channel =
    new RegExp(`(?:^|[,.;]|\\bplease|\\bjust|\\bonly|\\bso)\\s+(${channelWords})\\s+me\\b`).exec(text) ??
    new RegExp(`\\b(?:contact|reach|update)\\s+me\\s+(?:by|via|on|over)\\s+(${channelWords})\\b`).exec(text) ??
    new RegExp(`\\bprefers?\\s+(?:to be contacted by\\s+|being contacted by\\s+)?(${channelWords})\\b`).exec(text);
  if (channel && !new RegExp(`\\b(?:not|n't|never)\\s+(?:\\w+\\s+){0,2}${channel[1]}\\s+me\\b`).test(text)) add('contact channel', CHANNELS[channel[1]!]);

  // When one may call: "do not call me before noon", "only call after 6pm".
  const hours = /\b(?:call|ring|phone|contact)\s+(?:me\s+)?(?:only\s+)?((?:before|after|between|until|in the)\s+[^.,;]+)/.exec(text);
  if (hours) add('calling hours', `${/\b(?:not|n't|never)\b/.test(text.slice(0, hours.index + 1)) ? 'not ' : ''}${hours[1]}`);

  // The delivery days or times asked for (a preference, not an observation of when the courier came).
  if (/\bdeliver(?:y|ies|ed)?\b/.test(text) && /\b(?:best|suits?|prefer\w*|please|only|would like|want)\b/.test(text)) {
    const times = [...text.matchAll(TIMES)].map((m) => m[1]!.replace(/s$/, ''));
    if (times.length) add('delivery times', times.join(' '));
  }

  // The resolution preferred: "prefer(s) X to/over Y", "would rather have X than Y", "X rather than Y".
  const resolutionWords = Object.keys(RESOLUTIONS).join('|');
  const resolution =
    new RegExp(`\\b(?:prefers?|rather have|rather get|would rather|would like|want)\\s+(?:a\\s+|an\\s+|to get\\s+(?:a\\s+)?)?(${resolutionWords})\\b`).exec(text) ??
    new RegExp(`\\b(${resolutionWords})\\s+(?:rather than|instead of|over)\\b`).exec(text);
  if (resolution) add('preferred resolution', RESOLUTIONS[resolution[1]!]);

  // A favourite: "my favourite brand is (now) X", "X is my favourite brand".
  const favourite = /\bmy favou?rite\s+(\w+)\s+is\s+(?:now\s+)?([^.]+)/.exec(text);
  const favouriteAfter = /\b([\w ]+?)\s+is\s+(?:now\s+)?my favou?rite\s+(\w+)/.exec(text);
  if (favourite) add(`favourite ${favourite[1]}`, favourite[2]);
  else if (favouriteAfter) add(`favourite ${favouriteAfter[2]}`, favouriteAfter[1]!.split(/\b(?:and|so)\b/).pop());

  return found;
}

/** The verdict on one older note. */
export type OfflineVerdict = 'replaces' | 'compatible' | 'unsure';

/** Judges whether `newer` replaces `older`, by the facets both state. */
export function judgeReplacement(newer: string, older: string): { verdict: OfflineVerdict; reason: string } {
  const a = statedValues(newer);
  const b = statedValues(older);
  const shared = b.filter((old) => a.some((n) => n.facet === old.facet));
  if (!shared.length) return { verdict: 'compatible', reason: 'they state different things' };
  const changed = shared.filter((old) => a.find((n) => n.facet === old.facet)!.value !== old.value);
  if (!changed.length) return { verdict: 'compatible', reason: `both state the same ${shared[0]!.facet}` };
  if (shared.length < b.length) {
    return { verdict: 'unsure', reason: `the ${changed[0]!.facet} changed, but the older note also states what the newer does not` };
  }
  return { verdict: 'replaces', reason: `a different ${changed.map((c) => c.facet).join(' and ')}` };
}

interface JudgeInput {
  newer: string;
  older: { id: number; text: string }[];
}

/** The offline reply to a 'supersede' request: one verdict per older note, as JSON text. */
export function offlineJudgeSupersession(request: ModelRequest): ModelReply {
  const last = request.messages[request.messages.length - 1];
  const text = typeof last?.content === 'string' ? last.content : (last?.content ?? []).map((b) => ('text' in b ? b.text : '')).join('\n');
  const payload = /<notes>([\s\S]*)<\/notes>/.exec(text)?.[1];
  let input: JudgeInput = { newer: '', older: [] };
  try {
    if (payload) input = JSON.parse(payload) as JudgeInput;
  } catch {
    // An unreadable request gets no verdicts, which the caller reads as unsure: both kept.
  }
  const verdicts = input.older.map((old) => ({ id: old.id, ...judgeReplacement(input.newer, old.text) }));
  const reply = JSON.stringify({ verdicts });
  return {
    id: `msg_off_judge_${verdicts.map((v) => `${v.id}${v.verdict[0]}`).join('_') || 'none'}`,
    model: OFFLINE_JUDGE_MODEL,
    content: [{ type: 'text', text: reply, citations: null }],
    stop_reason: 'end_turn',
    usage: { input_tokens: estimateTokens(text), output_tokens: estimateTokens(reply), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
