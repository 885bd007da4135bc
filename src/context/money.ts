// Amounts in the desk notes, in the order's own currency. casework stores amounts in the
// currency's minor unit (amount_cents); the currencies its shops use have two decimals, and a
// few without minor units are listed so ¥1200 is not shown as ¥12.00. Pure: workflow code uses it.

const SYMBOLS: Record<string, string> = { GBP: '£', EUR: '€', USD: '$' };
const NO_MINOR_UNIT = new Set(['JPY', 'KRW', 'ISK', 'CLP', 'VND']);
const THREE_DECIMALS = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

/** How many decimals the currency's minor unit has (ISO 4217): 2 for most, 0 for JPY, 3 for KWD. */
export function minorUnitDigits(currency: string): number {
  const code = currency.trim().toUpperCase();
  return NO_MINOR_UNIT.has(code) ? 0 : THREE_DECIMALS.has(code) ? 3 : 2;
}

/**
 * A decimal amount as a shop's API writes it ("109.98", "1200", "-4.5") in integer minor units
 * of `currency`, exactly (no floating point). Throws naming the amount when it has more decimals
 * than the currency has, or is not a number.
 */
export function decimalToMinor(amount: string, currency: string): number {
  const digits = minorUnitDigits(currency);
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(amount.trim());
  if (!match) throw new Error(`"${amount}" is not a decimal amount`);
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  if (fraction.length > digits) throw new Error(`"${amount}" has more decimals than ${currency.toUpperCase()} has (${digits})`);
  const minor = Number(match[2]! + fraction.padEnd(digits, '0'));
  if (!Number.isSafeInteger(minor)) throw new Error(`"${amount}" is too large`);
  return match[1] && minor !== 0 ? -minor : minor;
}

/** Integer minor units as the decimal string a shop's API takes: (10998, "GBP") -> "109.98", (1200, "JPY") -> "1200". */
export function minorToDecimal(minor: number, currency: string): string {
  if (!Number.isSafeInteger(minor)) throw new Error(`${minor} is not a whole number of minor units`);
  const digits = minorUnitDigits(currency);
  const sign = minor < 0 ? '-' : '';
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${text}` : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** "£10.00", "€4.50", "1,200 JPY"; with no currency recorded (runs from before it was), the bare amount. */
export function formatMoney(minorUnits: number, currency?: string): string {
  const code = currency?.trim().toUpperCase();
  const digits = code ? minorUnitDigits(code) : 2;
  const value = (minorUnits / 10 ** digits).toFixed(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  if (!code) return value;
  const symbol = SYMBOLS[code];
  return symbol ? `${symbol}${value}` : `${value} ${code}`;
}
