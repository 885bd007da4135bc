// Payment details memory never holds: card numbers (Luhn-checked, however spaced), card
// security codes given with their digits, and bank details (IBAN with its checksum, sort code
// and account number, routing number, SWIFT/BIC). A sentence that only talks about a card or
// a bank account ("refund to her bank account", "will give the CVV by phone") holds none.

import { afterKeyword, firstToken } from './sensitive-values';

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

const CVV_WORD =
  /\b(?:cvv2?|cvc2?|cvn|csc|card verification (?:value|code|number)|(?:card )?security code|(?:3|4|three|four)[- ]digit (?:security )?(?:code|number)|code on the back)\b/gi;

/** True when `text` gives a card security code: the word and its 3 or 4 digits. */
export function containsCardSecurityCode(text: string): boolean {
  for (const after of afterKeyword(text, CVV_WORD)) if (/^\d{3,4}\b/.test(after.rest)) return true;
  return /\b\d{3,4}\s+(?:is|was)\s+(?:the|my|her|his|their)\s+(?:cvv2?|cvc2?|security code)\b/i.test(text);
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

/** True when `text` holds an IBAN whose mod-97 checksum is right. */
export function containsIban(text: string): boolean {
  return (text.match(/\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,4})?\b/g) ?? []).some(ibanValid);
}

const SORT_CODE_WORD = /\bsort ?codes?\b/gi;
const ACCOUNT_WORD = /\b(?:bank )?(?:account|acct|a\/c)(?: (?:number|no\.?|num|#))?/gi;
const ROUTING_WORD = /\b(?:routing|aba|transit)(?: (?:number|no\.?))?/gi;
const SWIFT_WORD = /\b(?:swift|bic)(?: code)?/gi;

/** True when `text` gives bank details: an IBAN, a sort code or account number with its digits, a routing number or a BIC. */
export function containsBankDetails(text: string): boolean {
  if (containsIban(text)) return true;
  for (const after of afterKeyword(text, SORT_CODE_WORD)) if (/^\d{2}[- ]?\d{2}[- ]?\d{2}\b/.test(after.rest)) return true;
  for (const after of afterKeyword(text, ACCOUNT_WORD)) if (/^\d(?:[ -]?\d){7,16}\b/.test(after.rest)) return true;
  for (const after of afterKeyword(text, ROUTING_WORD)) if (/^\d{9}\b/.test(after.rest)) return true;
  for (const after of afterKeyword(text, SWIFT_WORD)) if (/^[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/.test(firstToken(after.rest))) return true;
  // "12-34-56 31926819": a sort code shape next to an eight-digit account, without the words.
  return /\b\d{2}-\d{2}-\d{2}\b/.test(text) && /(?<![\d-])\d{8}(?![\d-])/.test(text);
}
