// Amounts in the desk notes, in the order's own currency. casework stores amounts in the
// currency's minor unit (amount_cents); the currencies its shops use have two decimals, and a
// few without minor units are listed so ¥1200 is not shown as ¥12.00. Pure: workflow code uses it.

const SYMBOLS: Record<string, string> = { GBP: '£', EUR: '€', USD: '$' };
const NO_MINOR_UNIT = new Set(['JPY', 'KRW', 'ISK', 'CLP', 'VND']);

/** "£10.00", "€4.50", "1,200 JPY"; with no currency recorded (runs from before it was), the bare amount. */
export function formatMoney(minorUnits: number, currency?: string): string {
  const code = currency?.trim().toUpperCase();
  const digits = code && NO_MINOR_UNIT.has(code) ? 0 : 2;
  const value = (minorUnits / 10 ** digits).toFixed(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  if (!code) return value;
  const symbol = SYMBOLS[code];
  return symbol ? `${symbol}${value}` : `${value} ${code}`;
}
