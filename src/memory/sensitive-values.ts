// What a secret looks like once a word such as "password" or "gate code" has been seen: the
// words that may sit between the keyword and the value ("for the portal", "is now", ":") and
// the value itself. Shared by the screen's rules so "the gate code changes every month"
// (no value) is told apart from "the gate code is 1234" (a value) the same way everywhere.

/** Words after "password is" (or a code word) that describe it rather than give it. */
export const NOT_A_VALUE = new Set(
  (
    'a an the my her his their our your its this that these those it one not no never too very so quite really always also ' +
    'still now just same different wrong incorrect invalid expired old new correct right fine ok okay weak strong long short ' +
    'secure safe private personal secret unknown required needed mandatory optional case-sensitive sensitive there here in on ' +
    'at for with by from of to as and or but if when because since which who being been be written saved stored lost forgotten ' +
    'changed reset updated blocked locked hidden shared known nothing something anything hard easy simple complicated mine hers ' +
    'theirs last next every each again please manager hint field box screen page link email emails change changes expiry policy ' +
    'rules requirements protected yet what where how why sent texted emailed given below above attached enclosed following'
  ).split(' '),
);

/** Looks like a chosen secret rather than a word: has a digit, a symbol, or a capital inside it. */
export function looksSecret(token: string): boolean {
  return /\d/.test(token) || /[!@#$%^&*_+=~|<>]/.test(token) || /[a-z][A-Z]/.test(token);
}

/** A word that, after "is" or ":", is plainly not the value itself ("wrong", "changed", "the"). */
export function describesRatherThanGives(token: string): boolean {
  const word = token.toLowerCase();
  return NOT_A_VALUE.has(word) || (!looksSecret(token) && word.length > 4 && /(?:ed|ing|ly)$/.test(word));
}

// "for the tracking site", "on the back of the card": up to two short phrases between the keyword and the value.
// The phrase's noun may take a second word ("the bike store"), never one that announces the value.
const PHRASE =
  /^(?:\s+(?:for|to|on|of|at|into|from)\s+(?:(?:the|my|her|his|their|our|your|an?)\s+)?[\w'’-]+(?:\s+(?!(?:is|was|are|were|now|to|as|has|had|will|should|must|can)\b)[a-z][\w'’-]*)?){0,2}/i;
// "is", "was now", ":", "= ", "changed to": what announces a value.
const CONNECTORS = /^(?:\s*(?:[:=]|[-–](?=\s)|\b(?:is|was|are|were|now|still|currently|just|has been|had been|been|changed|reset|updated|set|to|as|became|becomes)\b|['’]s\b))*/i;
const ASSERTING = /[:=]|\b(?:is|was|are|were|to|as|became|becomes)\b|['’]s\b/i;

/** What follows a keyword: whether a value was announced ("is", ":") and the text from the value on. */
export interface AfterKeyword {
  /** The keyword as written ("pw", "Gate code"). */
  keyword: string;
  announced: boolean;
  /** True when the announcement was ":" or "=", the strongest sign a value follows. */
  colon: boolean;
  rest: string;
}

/** Each place `keyword` (a global, case-insensitive regex) occurs, with what follows it parsed. */
export function* afterKeyword(text: string, keyword: RegExp): Generator<AfterKeyword> {
  for (const match of text.matchAll(keyword)) {
    let rest = text.slice((match.index ?? 0) + match[0].length);
    rest = rest.slice(PHRASE.exec(rest)?.[0].length ?? 0);
    const connectors = CONNECTORS.exec(rest)?.[0] ?? '';
    rest = rest.slice(connectors.length).replace(/^\s*["'“‘]?/, '');
    yield { keyword: match[0], announced: ASSERTING.test(connectors), colon: /[:=]/.test(connectors), rest };
  }
}

/** The first token of `rest` with trailing punctuation dropped ("hunter2," -> "hunter2"). */
export function firstToken(rest: string): string {
  const token = /^[^\s,;"”’)]+/.exec(rest)?.[0] ?? '';
  return token.replace(/[.!?:']+$/, '');
}

const DIGIT_WORD = '(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)';
/** A code given as 3 to 8 digits, possibly spaced, dashed, starred or hashed: "4821", "55 12 90", "#7391#". */
export const DIGIT_CODE = /^[#*]?\d(?:[ -]?\d){2,7}#?(?!\d)/;
/** A code spelled out in words: "one two three four". */
export const SPELLED_CODE = new RegExp(`^${DIGIT_WORD}(?:[\\s,-]+${DIGIT_WORD}){2,}\\b`, 'i');

/** True when `rest` starts with a code of at least `minDigits` digits, in figures or in words. */
export function startsWithCode(rest: string, minDigits = 3): boolean {
  const figures = DIGIT_CODE.exec(rest)?.[0];
  if (figures && figures.replace(/\D/g, '').length >= minDigits) return true;
  return minDigits <= 4 && SPELLED_CODE.test(rest);
}
