// Secrets memory never holds: passwords in any phrasing ("pw hunter2", "login priya / x",
// "Passcode: tulip"), PINs and door or gate codes, one-time codes, and government identity
// numbers. Each rule wants the secret itself, not the word for it: "I reset my password last
// week" and "the gate code changes every month, ask me for it" hold none and are kept.

import { afterKeyword, describesRatherThanGives, firstToken, looksSecret, startsWithCode } from './sensitive-values';

const PASSWORD_WORD = /\b(?:pass ?words?|passwd|pwd|pw|pass ?codes?|pass ?phrases?|pass(?=\s*[:=]))\b/gi;
const ABBREVIATION = /^(?:pw|pwd|passwd)$/i;
const LOGIN_WORD = /\b(?:log ?in|sign[- ]?in|user ?name|user|account|credentials)\b(?:\s+(?:is|are|details|with|as|for \w+))*\s*[:=]?\s*/gi;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;

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
  // "login priya / sunflower", "sign in with priya.k@example.com / Mango#55".
  for (const match of text.matchAll(LOGIN_WORD)) {
    const pair = /^(\S+?)\s*(\/|\||:|,|\band\b)\s*(\S+)/i.exec(text.slice((match.index ?? 0) + match[0].length));
    if (!pair) continue;
    const [, who, separator, secret] = pair;
    const value = secret.replace(/[.!?,;]+$/, '');
    if (describesRatherThanGives(who) || !value || describesRatherThanGives(value)) continue;
    if (/[/|:]/.test(separator) || looksSecret(value)) return true;
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
const NOT_A_SECRET_CODE = /(?:post|zip|postal|area|dialling|dialing|country|promo|discount|voucher|coupon|gift|referral|bar|qr|tax|product|dress|colour|color|source|error|status|tracking)\s*$/i;
const MONTH = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s*$/i;
const NUMBERED_THING = /\b(?:order|orders|no\.?|number|ref|reference|tracking|flat|block|unit|room|suite|house|apartment|invoice|ticket|case|item|sku|#)\s*$/i;

/** True when `text` gives a one-time, verification or other texted code with its digits. */
export function containsOneTimeCode(text: string): boolean {
  for (const after of afterKeyword(text, ONE_TIME_WORD)) if (startsWithCode(after.rest, 4)) return true;
  for (const match of text.matchAll(/\bcodes?\b/gi)) {
    const start = match.index ?? 0;
    if (NOT_A_SECRET_CODE.test(text.slice(0, start))) continue;
    const window = text.slice(start + match[0].length).split(/[.;!?]/)[0];
    const words = window.split(/\s+/).filter(Boolean).slice(0, 6);
    for (let i = 0; i < words.length; i++) {
      const code = /^\d(?:[ -]?\d){3,7}$/.test(words[i].replace(/[,:]$/, ''));
      if (!code) continue;
      const before = words.slice(0, i).join(' ');
      if (!NUMBERED_THING.test(before) && !MONTH.test(before) && !/\b(?:am|pm)\b/i.test(words[i + 1] ?? '')) return true;
    }
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
