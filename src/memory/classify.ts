// How a remembered sentence is filed, decided by code rather than by the model: its kind, and
// the profile field it states, if any. Pure. The one rule that matters for safety: anything
// about status, entitlement, approval or policy is a customer_claim, shown as what the
// customer claims and never as a fact (docs/architecture.md, "Long-term memory").

/** What a note is: a fact, a stated preference, an unverified claim, or a commitment we made. */
export type NoteKind = 'fact' | 'preference' | 'customer_claim' | 'commitment';

/** The profile fields casework can name in advance. */
export const PROFILE_FIELDS = ['delivery_instructions', 'preferred_resolution', 'preferred_contact_channel', 'language'] as const;
/** One named profile field. */
export type ProfileField = (typeof PROFILE_FIELDS)[number];

/** A profile field as a person reads it. */
export const PROFILE_LABELS: Readonly<Record<ProfileField, string>> = {
  delivery_instructions: 'delivery instructions',
  preferred_resolution: 'preferred resolution',
  preferred_contact_channel: 'preferred contact',
  language: 'language',
};

/** How code filed a fact. `subject` is null for claims and for facts no profile field names. */
export interface Classification {
  kind: Exclude<NoteKind, 'commitment'>;
  subject: ProfileField | null;
}

// Status, entitlement, approval and policy: what a customer could try to grant themselves.
const CLAIM =
  /\b(vip|v\.i\.p|premium|gold|platinum|diamond|elite|priority|special|loyal(?:ty)?|trusted|verified|staff|employee|partner|ambassador)\b(?:\W+\w+){0,2}\W+(?:customer|member|status|tier|account|client|level)\b|\b(?:i am|i'm|im|customer is|they are|she is|he is)\W+(?:a\W+)?(?:vip|v\.i\.p)\b|\b(?:pre-?approved|approv\w*|authori[sz]\w*|entitled|entitlement|eligible|allowed|permitted|guarantee\w*|waive\w*|exempt\w*|(?:make|made|an) exceptions?|override|owed|owe me|compensat\w*|free (?:returns?|shipping|delivery|refunds?|replacements?|of charge)|no questions asked|always (?:get|gets|be given|receive)|(?:refunds?|returns?|credit|discounts?) (?:are|is) (?:automatic|guaranteed|unlimited)|polic(?:y|ies)|rules? (?:say|says|allow)|promised|manager (?:said|agreed|told)|agreed to|unlimited|forever)\b/i;

const DELIVERY_TOPIC =
  /\b(deliver(?:y|ies|ed)?|parcels?|packages?|couriers?|drop(?:ped)?[- ]off|doorstep|porch|reception|concierge|neighbou?r|safe place|mailroom|letterbox|front door|back door|gate|block [a-z0-9]|building|flat|apartment|floor)\b/i;
const INSTRUCTION =
  /\b(must|should|always|never|only|please|prefer\w*|rather|instead|leave (?:it|them|parcels?|packages?)?|go(?:es)? to|deliver to|send to|bring to|take to|use the|not (?:the|at|to)|do not|don't)\b/i;
const RESOLUTION = /\b(refunds?|replacements?|replace|reship\w*|re-?send|store credit|voucher|exchange|credit)\b/i;
const PREFERENCE = /\b(prefer\w*|rather|instead|would like|wants?|likes?|happier with|best|please|only|favou?rs?)\b/i;
const CONTACT = /\b(e-?mail|phone|call(?:s|ed|ing)?|ring|text(?:s|ed)?|sms|whatsapp|messages?|chat|letter|post|contact(?:ed)?|reach(?:ed)?)\b/i;
const LANGUAGE =
  /\b(english|spanish|french|german|italian|portuguese|dutch|polish|romanian|greek|turkish|arabic|hindi|urdu|bengali|punjabi|gujarati|tamil|welsh|irish|chinese|mandarin|cantonese|japanese|korean|russian|ukrainian|swedish|danish|norwegian|finnish)\b/i;
const LANGUAGE_CUE = /\b(speaks?|language|in|write|reply|replies|answer|communicat\w*|native)\b/i;

/** Files `fact`: claims first (they must never become a profile field), then the profile fields. */
export function classifyFact(fact: string): Classification {
  if (CLAIM.test(fact)) return { kind: 'customer_claim', subject: null };
  if (LANGUAGE.test(fact) && LANGUAGE_CUE.test(fact)) return { kind: 'preference', subject: 'language' };
  if (RESOLUTION.test(fact) && PREFERENCE.test(fact)) return { kind: 'preference', subject: 'preferred_resolution' };
  if (DELIVERY_TOPIC.test(fact) && INSTRUCTION.test(fact)) return { kind: 'preference', subject: 'delivery_instructions' };
  if (CONTACT.test(fact) && PREFERENCE.test(fact)) return { kind: 'preference', subject: 'preferred_contact_channel' };
  return { kind: PREFERENCE.test(fact) ? 'preference' : 'fact', subject: null };
}

/**
 * The natural key of a note: lower case, punctuation and runs of space collapsed, so
 * "Deliveries must go to Block B." and "deliveries must go to block b" are one memory.
 */
export function normaliseFact(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Collapses whitespace and strips quotes the model sometimes wraps a fact in. */
export function tidyFact(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^["'“”‘’]+|["'“”‘’]+$/g, '')
    .trim();
}

/**
 * Words that carry the meaning of a near-duplicate: numbers and one-letter names ("Block B",
 * "gate 2"). Two notes that differ in these are different memories however similar they look.
 */
export function distinguishingTokens(text: string): string {
  return [
    ...new Set(
      normaliseFact(text)
        .split(' ')
        .filter((w) => /\d/.test(w) || w.length === 1),
    ),
  ]
    .sort()
    .join(' ');
}
