// Secrets memory never holds: passwords in any phrasing ("pw hunter2", "login priya / x",
// "Passcode: tulip"), PINs and door or gate codes, one-time codes, and government identity
// numbers. Each rule wants the secret itself, not the word for it: "I reset my password last
// week" and "the gate code changes every month, ask me for it" hold none and are kept.

import { afterKeyword, describesRatherThanGives, firstToken, looksSecret, startsWithCode } from './sensitive-values';

const PASSWORD_WORD = /\b(?:pass ?words?|passwd|pwd|pw|pass ?codes?|pass ?phrases?|pass(?=\s*[:=]))\b/gi;
const ABBREVIATION = /^(?:pw|pwd|passwd)$/i;
const LOGIN_WORD = /\b(?:log ?ins?|sign[- ]?in|user ?name|user|account|credentials|creds)\b(?:\s+(?:is|are|details|with|as|for \w+))*\s*[:=]?\s*/gi;
const PASSPHRASE_WORD = /\bpass ?phrases?\b/gi;
const LITTLE_WORD =
  /^(?:the|a|an|not|no|too|very|same|different|being|been|in|on|at|for|with|by|from|of|to|and|or|but|if|when|because|so|it|this|that|she|he|they|we|you|i|her|his|their|my|our|your|is|was|still|now)$/i;
const SECRET_ANSWER_WORD =
  /\b(?:security (?:questions?|answers?)|secret (?:questions?|answers?)|memorable (?:word|answer|information|date|name|place)|maiden name|password hint|answer to (?:her|his|my|the) security question)\b/gi;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;

// Letters mixed with digits or symbols, four characters or more: "Jasmine!9", "Rex1", not "4471" or "6pm".
function isChosenSecret(word: string): boolean {
  return word.length >= 4 && !word.includes('@') && /[a-z]/i.test(word) && (/\d/.test(word) || /[!#$%^&*_+=~|<>]/.test(word));
}

/** True when `text` gives a password or a login with its secret. */
export function containsPassword(text: string): boolean {
  for (const after of afterKeyword(text, PASSWORD_WORD)) {
    const token = firstToken(after.rest);
    if (!token) continue;
    if (looksSecret(token) && (token.length >= 4 || after.colon)) return true;
    if (describesRatherThanGives(token)) continue;
    // "password is tulip", "Passcode: tulip", "pw tulip": a plain word counts once it is announced or abbreviated.
    if (after.announced || ABBREVIATION.test(after.keyword)) return true;
  }
  // "Passphrase is correct horse battery staple": three or more words with no little word among them.
  for (const after of afterKeyword(text, PASSPHRASE_WORD)) {
    const words = after.rest
      .split(/[.;!?,](?:\s|$)/)[0]!
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 4);
    if (after.announced && words.length >= 3 && !words.some((w) => LITTLE_WORD.test(w))) return true;
  }
  // "the password is the same as her email one, Jasmine!9": a chosen secret later in the clause.
  for (const match of text.matchAll(PASSWORD_WORD)) {
    const clause = text.slice((match.index ?? 0) + match[0].length).split(/[.;!?](?:\s|$)/)[0]!;
    if (
      clause
        .split(/\s+/)
        .slice(0, 14)
        .some((word) => isChosenSecret(word.replace(/[.,;:!?)"'”’]+$/, '')))
    )
      return true;
  }
  // Answers that unlock an account as surely as a password: "mother's maiden name is Smith".
  for (const after of afterKeyword(text, SECRET_ANSWER_WORD)) {
    const token = firstToken(after.rest);
    if (token && after.announced && !describesRatherThanGives(token)) return true;
  }
  // "login priya / sunflower", "sign in with priya.k@example.com / Mango#55".
  for (const match of text.matchAll(LOGIN_WORD)) {
    const pair = /^(\S+?)\s*(\/|\||:|,|\band\b|\bpass\b|\bpw\b)\s*(\S+)/i.exec(text.slice((match.index ?? 0) + match[0].length));
    if (!pair) continue;
    const [, who = '', separator = '', secret = ''] = pair;
    const value = secret.replace(/[.!?,;]+$/, '');
    if (describesRatherThanGives(who) || !value || describesRatherThanGives(value)) continue;
    if (/[/|:]|pass|pw/i.test(separator) || looksSecret(value)) return true;
  }
  return new RegExp(`${EMAIL.source}\\s*[/|:]\\s*\\S*(?:\\d|[!@#$%^&*_+=~])`).test(text);
}

const PIN_WORD = /\bpins?(?:\s*(?:number|code))?\b/gi;
const ACCESS_WORD =
  /\b(?:(?:gate|door|front door|back door|entry|entrance|alarm|keypad|building|access|lobby|key ?safe|key ?box|lock ?box|locker|garage|intercom|buzzer|padlock|bike store|bin store)\s*(?:codes?|combinations?|combos?|pins?|pass ?codes?)|combinations?|combos?)\b/gi;

/** True when `text` gives a PIN, a door, gate or key-safe code, in figures or in words. */
export function containsAccessCode(text: string): boolean {
  for (const after of afterKeyword(text, PIN_WORD)) if (startsWithCode(after.rest, 4)) return true;
  for (const after of afterKeyword(text, ACCESS_WORD)) if (startsWithCode(after.rest, 3) || /^[A-Z]\d{3,6}\b/.test(after.rest)) return true;
  return (
    /\b(?:enter|type|press|key in|punch in|tap in)\s+[#*]?\d{3,8}#?\s+(?:on|at|into|in)\s+the\s+(?:keypad|door|gate|panel|pad)\b/i.test(text) ||
    /\b\d{3,8}#?\s+(?:is|was)\s+(?:the|my|our|her|his)\s+(?:gate|door|entry|alarm|keypad|building|key ?safe)\s+code\b/i.test(text)
  );
}

const ONE_TIME_WORD =
  /\b(?:one[- ]?time (?:pass)?(?:codes?|pins?|passwords?|passcodes?)|otps?|2fa(?: codes?)?|two[- ]factor(?: codes?)?|mfa(?: codes?)?|verification codes?|authenti(?:cation|cator) codes?|log ?in codes?|sign[- ]in codes?|sms codes?|text codes?|confirmation codes?|security codes? (?:sent|texted))\b/gi;
// A bare "code" followed closely by digits, when nothing says it is a postcode, a discount or an order.
const NOT_A_SECRET_CODE =
  /(?:post|zip|postal|area|dialling|dialing|country|promo|discount|voucher|coupon|gift|referral|bar|qr|tax|product|dress|colour|color|source|error|status|tracking)\s*$/i;
const MONTH = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s*$/i;
const NUMBERED_THING = /\b(?:order|orders|no\.?|number|ref|reference|tracking|flat|block|unit|room|suite|house|apartment|invoice|ticket|case|item|sku|#)\s*$/i;

// A code of 4 to 8 digits among the first few words of `window`, possibly spread over groups
// ("55 12 90"), and not an order number, a date's year or a time.
function codeAmong(window: string, words: number): boolean {
  const list = window
    .split(/[.;!?](?:\s|$)/)[0]!
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, words)
    .map((w) => w.replace(/[,:]$/, ''));
  for (let i = 0; i < list.length; i++) {
    let digits = '';
    let j = i;
    while (j < list.length && /^[#*]?\d{1,8}#?$/.test(list[j]!) && digits.length < 8) digits += list[j++]!.replace(/\D/g, '');
    if (digits.length < 4 || digits.length > 8) continue;
    const before = list.slice(0, i).join(' ');
    if (!NUMBERED_THING.test(before) && !MONTH.test(before) && !/^(?:am|pm)$/i.test(list[j] ?? '')) return true;
  }
  return false;
}

/** True when `text` gives a one-time, verification or other texted code with its digits. */
export function containsOneTimeCode(text: string): boolean {
  for (const match of text.matchAll(ONE_TIME_WORD)) if (codeAmong(text.slice((match.index ?? 0) + match[0].length), 6)) return true;
  for (const match of text.matchAll(/\bcodes?\b/gi)) {
    const start = match.index ?? 0;
    if (NOT_A_SECRET_CODE.test(text.slice(0, start))) continue;
    if (codeAmong(text.slice(start + match[0].length), 6)) return true;
  }
  return false;
}

const ID_WORD =
  /\b(?:passport|driv(?:er'?s|ing) licen[cs]e|licen[cs]e|national insurance|ni|nino|nhs|social security|ssn|tax (?:id|number|reference)|utr|medicare|medicaid)(?: (?:number|no\.?|num|#))?/gi;

/** True when `text` gives a government identity number: SSN, National Insurance, passport, licence or tax id. */
export function containsGovernmentId(text: string): boolean {
  if (/\b\d{3}-\d{2}-\d{4}\b/.test(text)) return true;
  if (/\b[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/.test(text)) return true;
  for (const after of afterKeyword(text, ID_WORD)) {
    const id = /^[A-Z0-9](?:[ -]?[A-Z0-9]){5,15}\b/i.exec(after.rest)?.[0] ?? '';
    if ((id.match(/\d/g) ?? []).length >= 5) return true;
  }
  return false;
}
