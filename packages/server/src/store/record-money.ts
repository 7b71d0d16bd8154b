/**
 * A records page's money converted in JavaScript with the range's day-rate table, read once per
 * walk (walk-memory.ts), instead of in every page's SQL: the same integer arithmetic as the
 * planner's `convertedMinor` and `money` (CONTRACT §3 rule 7), so the same numbers to the bit —
 * amount × rate(target) ÷ rate(source), rounded half-even to the target's minor unit directly
 * from the exact quotient, then divided as a double by 10^minor units.
 */
import { CURRENCIES, type CurrencyCode } from "../currencies.js";

/** Rates by `currency + day` (`YYYY-MM-DD`), in millionths per EUR; days without a rate absent. */
export type DayRates = ReadonlyMap<string, bigint>;

/** The key of a currency's rate on a day in `DayRates`. */
export function dayRateKey(currency: string, day: string): string {
  return `${currency} ${day}`;
}

/**
 * n ÷ d for d > 0, rounded half to even, by magnitude with the sign given back (a refund):
 * the same as the stores' `div_half_even` (sql-dialect.ts).
 */
export function divHalfEven(n: bigint, d: bigint): bigint {
  const magnitude = n < 0n ? -n : n;
  let quotient = magnitude / d;
  const twice = 2n * (magnitude % d);
  if (twice > d || (twice === d && quotient % 2n === 1n)) quotient += 1n;
  return n < 0n ? -quotient : quotient;
}

/** Converts stored amounts (ten-thousandths of `source`) to `target`, as the page SQL would. */
export class MoneyConverter {
  private readonly toMinor: bigint;
  private readonly scale: number;

  constructor(
    private readonly target: CurrencyCode,
    private readonly rates: DayRates,
  ) {
    const minorUnits = CURRENCIES[target].minorUnits;
    this.toMinor = 10n ** BigInt(4 - minorUnits);
    this.scale = 10 ** minorUnits;
  }

  /**
   * The amount in the target currency, or null when a rate lacks (never served: a walk's count
   * refuses the range first, CONTRACT §3 rule 7).
   */
  convert(amountE4: unknown, source: string, day: string): number | null {
    if (amountE4 === null || amountE4 === undefined) return null;
    const amount = BigInt(amountE4 as bigint | string | number);
    if (source === this.target) return Number(divHalfEven(amount, this.toMinor)) / this.scale;
    const targetRate = this.rates.get(dayRateKey(this.target, day));
    const sourceRate = this.rates.get(dayRateKey(source, day));
    if (targetRate === undefined || sourceRate === undefined) return null;
    return Number(divHalfEven(amount * targetRate, sourceRate * this.toMinor)) / this.scale;
  }
}
