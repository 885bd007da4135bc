// What code refuses to remember, whatever the model asks (docs/architecture.md,
// "Long-term memory"; docs/memory-privacy.md): card numbers, card security codes, bank details, passwords, PINs and access
// codes, one-time codes, identity numbers, sensitive asides, and other people's personal
// details. Each rule looks for the thing itself, not the word for it: "I reset my password
// last week" or "ask me for the current gate code" hold no secret and are stored. The reason
// the model reads names the kind of thing refused and never repeats it. Pure. The labelled
// corpus in src/dev/screen-corpus.json is the specification; src/dev/bench-screen.ts scores it.

import { findAside, type AsideKind } from './sensitive-asides';
import { containsBankDetails, containsCardNumber, containsCardSecurityCode } from './sensitive-payment';
import { containsAccessCode, containsGovernmentId, containsOneTimeCode, containsPassword } from './sensitive-secrets';
import { containsThirdPartyDetails } from './sensitive-third-party';

export { containsCardNumber, luhnValid } from './sensitive-payment';

/** Why a text may not be stored: a category and the short reason the model reads. */
export interface SensitiveFinding {
  category: 'card_number' | 'card_security_code' | 'bank_account' | 'password' | 'one_time_code' | 'access_code' | 'government_id' | 'sensitive_aside' | 'third_party';
  reason: string;
}

const ASIDE = ' Never store it; save only what helps with orders and deliveries, without the personal detail.';

const ASIDE_REASONS: Record<AsideKind, string> = {
  health: 'it mentions health or medical details.' + ASIDE,
  religion: 'it mentions religion or beliefs.' + ASIDE,
  sexuality: 'it mentions sexuality or gender identity.' + ASIDE,
  ethnicity: 'it mentions ethnic origin or immigration status.' + ASIDE,
  politics: 'it mentions political opinions.' + ASIDE,
  trade_union: 'it mentions trade union membership.' + ASIDE,
  criminal: 'it mentions a criminal or legal matter.' + ASIDE,
  personal_matter: 'it mentions a sensitive personal matter.' + ASIDE,
};

// Order matters only for which reason is shown; every rule is checked until one matches.
const RULES: { category: SensitiveFinding['category']; test: (text: string) => boolean; reason: string }[] = [
  // Bank details first: a sort code and account number can pass Luhn by chance and read as a card.
  {
    category: 'bank_account',
    test: containsBankDetails,
    reason: 'it contains bank account details. Payment details are never stored.',
  },
  {
    category: 'card_number',
    test: containsCardNumber,
    reason: 'it contains what looks like a payment card number. Card details are never stored.',
  },
  {
    category: 'card_security_code',
    test: containsCardSecurityCode,
    reason: 'it contains a card security code (CVV). Card details are never stored.',
  },
  {
    category: 'password',
    test: containsPassword,
    reason: 'it contains a password or login details. Passwords are never stored; save only that the customer has an account, if that matters.',
  },
  {
    category: 'access_code',
    test: containsAccessCode,
    reason: 'it contains a PIN or an access code. Secrets like that are never stored; the customer can give them to the courier directly.',
  },
  {
    category: 'one_time_code',
    test: containsOneTimeCode,
    reason: 'it contains a one-time or verification code. Codes like that are never stored.',
  },
  {
    category: 'government_id',
    test: containsGovernmentId,
    reason: 'it contains a government identity number. Identity numbers are never stored.',
  },
];

const THIRD_PARTY_REASON =
  "it holds another person's personal details (their name with contact details, where they live, or their own orders). Save only the customer's own instruction, naming helpers by role.";

/** The first reason `text` must not be stored, or null when it may be. */
export function findSensitive(text: string): SensitiveFinding | null {
  for (const rule of RULES) if (rule.test(text)) return { category: rule.category, reason: rule.reason };
  const aside = findAside(text);
  if (aside) return { category: 'sensitive_aside', reason: ASIDE_REASONS[aside] };
  if (containsThirdPartyDetails(text)) return { category: 'third_party', reason: THIRD_PARTY_REASON };
  return null;
}

const MARKERS: Record<SensitiveFinding['category'], string> = {
  card_number: 'card number',
  card_security_code: 'card security code',
  bank_account: 'bank account',
  password: 'password',
  one_time_code: 'one time code',
  access_code: 'access code',
  government_id: 'government id',
  sensitive_aside: 'sensitive aside',
  third_party: "another person's details",
};

// Sentence ends, but not after "no.", "Mr." or "St." (a split there would part a name or an
// account number from what makes it sensitive).
const SENTENCE_END = /(?<=(?<!\b(?:no|nos|mr|mrs|ms|dr|st|prof|acc|acct|tel|ref|approx|e\.g|i\.e|vs|a\/c))[.!?;\n…])\s+/i;

/**
 * `text` with every sentence that trips a rule replaced by "[removed: what]", for text code
 * must keep (a case summary or resolution) rather than refuse. A sentence of up to three words
 * that gives a secret only with the one before it ("Her password is below. Tulip99") is
 * removed with it.
 */
export function redactSensitive(text: string): string {
  const sentences = text.split(SENTENCE_END);
  const findings = sentences.map((sentence) => findSensitive(sentence));
  for (let i = 0; i + 1 < sentences.length; i++) {
    // Only a short dangling sentence can be the rest of a secret ("Tulip99."); longer ones stand alone.
    if (findings[i] || findings[i + 1] || sentences[i + 1]!.split(/\s+/).length > 3) continue;
    // Only secrets: a person named in one sentence and a phone in the next are usually not one person's.
    const joined = findSensitive(`${sentences[i]!.replace(/[.!?;…\s]+$/, '')} ${sentences[i + 1]}`);
    if (joined && joined.category !== 'third_party' && joined.category !== 'sensitive_aside') findings[i] = findings[i + 1] = joined;
  }
  return sentences.map((sentence, i) => (findings[i] ? `[removed: ${MARKERS[findings[i].category]}]` : sentence)).join(' ');
}
