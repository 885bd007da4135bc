import { formatMoney } from '../../context/money';

// How the console writes amounts, durations and times: one place, so every page agrees.

/** An amount in its currency's minor units, as the desk notes write it: (4999, "GBP") -> "£49.99"; without a currency (runs from before it was recorded), the bare amount. */
export function money(minorUnits: number, currency?: string): string {
  return formatMoney(minorUnits, currency);
}

/** A cost in USD with enough digits for a fraction of a cent: "$0.0123". */
export function usd(value: number): string {
  return `$${value.toFixed(4)}`;
}

/** A span of time in words a person reads at a glance: "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** An ISO timestamp as "2026-12-03 09:41 UTC". */
export function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A whole number with thousands separators: 12345 -> "12,345". */
export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
