// What code refuses to remember, whatever the model asks (docs/architecture.md,
// "Long-term memory"): card numbers, card security codes, passwords, one-time and access codes, and
// sensitive asides. Pure and conservative: a false refusal costs the model one retry worded
// without the detail; a false acceptance stores personal data nobody should hold.

/** Why a text may not be stored: a category and the short reason the model reads. */
export interface SensitiveFinding {
  category: 'card_number' | 'card_security_code' | 'bank_account' | 'password' | 'one_time_code' | 'access_code' | 'government_id' | 'sensitive_aside';
  reason: string;
}

/** True when `digits` passes the Luhn checksum every payment card number carries. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

// Runs of digit groups joined by single spaces, dashes or dots: "4111 1111-1111 1111".
const DIGIT_RUN = /\d+(?:[ \-.]\d+)*/g;

/** True when `text` holds a Luhn-valid 13-19 digit number, however it is spaced or dashed. */
export function containsCardNumber(text: string): boolean {
  for (const run of text.match(DIGIT_RUN) ?? []) {
    const groups = run.split(/[ \-.]/);
    // Any consecutive groups may be the card: "4111 1111 1111 1111 exp 12 25" has extra groups.
    for (let start = 0; start < groups.length; start++) {
      let digits = '';
      for (let end = start; end < groups.length; end++) {
        digits += groups[end];
        if (digits.length > 19) break;
        if (digits.length >= 13 && luhnValid(digits)) return true;
      }
    }
  }
  return false;
}

function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/[ ]/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of moved) {
    const value = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55);
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

function containsIban(text: string): boolean {
  return (text.match(/\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,4})?\b/g) ?? []).some(ibanValid);
}

const ASIDE =
  ' Never store it; save only what helps with orders and deliveries, without the personal detail.';

// Order matters only for which reason is shown; every rule is checked until one matches.
const RULES: { category: SensitiveFinding['category']; test: (text: string) => boolean; reason: string }[] = [
  {
    category: 'card_number',
    test: containsCardNumber,
    reason: 'it contains what looks like a payment card number. Card details are never stored.',
  },
  {
    category: 'card_security_code',
    test: (t) => /\b(cvv2?|cvc2?|cvn|csc|cid|security code|card verification|(?:3|three|4|four)[- ]digit code|code on the back)\b/i.test(t),
    reason: 'it mentions a card security code (CVV). Card details are never stored.',
  },
  {
    category: 'bank_account',
    test: (t) => containsIban(t) || /\b(sort code|bank account|account number\W{0,3}\d|routing number|iban)\b/i.test(t),
    reason: 'it contains bank account details. Payment details are never stored.',
  },
  {
    category: 'password',
    test: (t) => /\b(pass ?words?|passwd|pwd|pass ?phrases?|pass ?codes?|log ?in details|credentials)\b/i.test(t),
    reason: 'it mentions a password or login details. Passwords are never stored.',
  },
  {
    category: 'access_code',
    test: (t) => /\bpin(?: number| code)?\b\W{0,3}(?:is\W+)?\d{3,8}\b|\bpin (?:number|code)\b|\b(?:door|gate|entry|alarm|keypad|building|access) ?codes?\b/i.test(t),
    reason: 'it contains a PIN or an access code. Secrets like that are never stored; the customer can give them to the courier directly.',
  },
  {
    category: 'one_time_code',
    test: (t) =>
      /\b(one[- ]time (?:pass)?(?:code|pin|password)|otp|2fa|two[- ]factor|mfa|verification code|authenti(?:cation|cator) code|login code|sms code|confirmation code)\b/i.test(t) ||
      // "the code is 482913": a code word followed closely by digits; postcodes and zip codes aside.
      /(?<!\b(?:post|zip|postal|post |zip |area |dialling |country |promo |discount |voucher |coupon ))\bcodes?\b\W{0,3}(?:\w+\W+){0,3}\b(?<!\border\s?(?:#|no\.?\s?|number\s)?)\d{4,8}\b/i.test(t),
    reason: 'it contains a one-time or verification code. Codes like that are never stored.',
  },
  {
    category: 'government_id',
    test: (t) =>
      /\b\d{3}-\d{2}-\d{4}\b/.test(t) ||
      /\b(social security|ssn|national insurance|passport (?:number|no)|driv(?:er'?s|ing) licen[cs]e (?:number|no)|tax (?:id|number))\b/i.test(t),
    reason: 'it contains a government identity number. Identity numbers are never stored.',
  },
  {
    category: 'sensitive_aside',
    test: (t) =>
      /\b(health|medical|medic(?:ine|ation)s?|diagnos\w*|illness|disease|disabilit(?:y|ies)|disabled|wheelchair|pregnan\w*|miscarriage|cancer|chemo\w*|diabet\w*|hiv|aids|covid|surgery|operation on|hospital\w*|doctors?|gp|therap(?:y|ist)|mental|depress\w*|anxiety|autis\w*|adhd|dementia|alzheimer\w*|epilep\w*|allerg(?:y|ies|ic)|prescriptions?|injur(?:y|ies|ed))\b/i.test(t),
    reason: 'it mentions health or medical details.' + ASIDE,
  },
  {
    category: 'sensitive_aside',
    test: (t) =>
      /\b(religio\w*|muslim|christian|jewish|hindu|sikh|buddhist|atheist|church|mosque|synagogue|temple|ramadan|pray(?:er|ing|s)?|kosher|halal|sabbath)\b/i.test(t),
    reason: 'it mentions religion or beliefs.' + ASIDE,
  },
  {
    category: 'sensitive_aside',
    test: (t) =>
      /\b(gay|lesbian|bisexual|transgender|sexual\w*|sex life|ethnic\w*|racial|race|political|politics|votes?d?|trade union|union member|immigration status|asylum|visa status|criminal record|convicted|arrested|prison|divorc\w*|bereave\w*|funeral|pass(?:ed)? away|bankrupt\w*|debt collectors?)\b/i.test(t),
    reason: 'it mentions a sensitive personal matter.' + ASIDE,
  },
];

/** The first reason `text` must not be stored, or null when it may be. */
export function findSensitive(text: string): SensitiveFinding | null {
  for (const rule of RULES) if (rule.test(text)) return { category: rule.category, reason: rule.reason };
  return null;
}

/**
 * `text` with every sentence that trips a rule replaced by "[removed: category]", for text
 * code must keep (a case summary) rather than refuse.
 */
export function redactSensitive(text: string): string {
  return text
    .split(/(?<=[.!?;\n])\s+/)
    .map((sentence) => {
      const finding = findSensitive(sentence);
      return finding ? `[removed: ${finding.category.replace(/_/g, ' ')}]` : sentence;
    })
    .join(' ');
}
