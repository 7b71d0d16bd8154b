/**
 * A records page's money converted in JavaScript with the stored FX rates, read once per data
 * generation (walk-memory.ts), instead of in every page's SQL: the same integer arithmetic as the
 * planner's `convertedMinor` and `money` (CONTRACT §3 rule 7), so the same numbers to the bit —
 * amount × rate(target) ÷ rate(source), rounded half-even to the target's minor unit directly
 * from the exact quotient, then divided as a double by 10^minor units.
 */
import { toEpochDay } from "../../calendar.js";
import { BASE_CURRENCY, CURRENCIES, type CurrencyCode } from "../../currencies.js";

/** The rate a conversion uses for a currency on a day (`YYYY-MM-DD`), in millionths per EUR. */
export interface DayRates {
  /** Undefined when the currency has no rate on or before the day. */
  rateOn(currency: string, day: string): bigint | undefined;
}

/** A stored FX rate: millionths of `currency` per EUR from `date` on. */
export interface FxRateRow {
  currency: string;
  /** `YYYY-MM-DD`. */
  date: string;
  rateE6: bigint;
}

/** EUR's rate against itself, in millionths. */
const BASE_RATE_E6 = 1_000_000n;

/**
 * The stored FX rates of a range of days, read once per data generation and calendar year
 * (walk-memory.ts): a day's rate is that day's, else the latest earlier one; EUR's is 1 (CONTRACT
 * §3 rule 7), as the planner's day-rate table has it. Held as typed arrays, 12 bytes a rate (3.3 MB for ECB's history since 1999, 279 k
 * rates, which held 11 MB of heap as day strings and BigInts for as long as a generation lasts).
 */
export class FxHistory implements DayRates {
  /** Per currency, its rates' epoch days, ascending, and the rates in the same order. */
  private readonly byCurrency = new Map<string, { days: Int32Array; rates: BigInt64Array }>();

  constructor(rows: Iterable<FxRateRow>) {
    const grouped = new Map<string, { day: number; rateE6: bigint }[]>();
    for (const row of rows) {
      let rates = grouped.get(row.currency);
      if (rates === undefined) {
        rates = [];
        grouped.set(row.currency, rates);
      }
      rates.push({ day: toEpochDay(row.date), rateE6: row.rateE6 });
    }
    for (const [currency, rates] of grouped) {
      rates.sort((a, b) => a.day - b.day);
      this.byCurrency.set(currency, {
        days: Int32Array.from(rates, (rate) => rate.day),
        rates: BigInt64Array.from(rates, (rate) => rate.rateE6),
      });
    }
  }

  rateOn(currency: string, day: string): bigint | undefined {
    if (currency === BASE_CURRENCY) return BASE_RATE_E6;
    const history = this.byCurrency.get(currency);
    if (history === undefined) return undefined;
    // The last rate dated on or before `day`: binary search over the ascending days.
    const epochDay = toEpochDay(day);
    let low = 0;
    let high = history.days.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (history.days[middle]! <= epochDay) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? undefined : history.rates[low - 1];
  }
}

/** The rates of several calendar years, each day's from its year's history (reads/records/records-reader.ts). */
export class YearlyRates implements DayRates {
  /** `years`: each year's history by its `YYYY`. */
  constructor(private readonly years: ReadonlyMap<string, DayRates>) {}

  rateOn(currency: string, day: string): bigint | undefined {
    return this.years.get(day.slice(0, 4))?.rateOn(currency, day);
  }
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

/**
 * n ÷ d rounded half to even, for 0 ≤ n and 0 < d both at most 2^53 − 1: the same as
 * `divHalfEven` in doubles, which hold such integers, their remainder and quotient exactly. The
 * quotient is the floor of the doubles' quotient, or one less when that rounded up to the next
 * integer (a negative remainder says so): exact while n + d ≤ 2^53, and cheaper than `%` of
 * doubles (a call to `fmod` per amount); past that, `%`.
 */
function divHalfEvenSafe(n: number, d: number): number {
  let quotient: number;
  let remainder: number;
  if (n + d <= Number.MAX_SAFE_INTEGER) {
    quotient = Math.floor(n / d);
    remainder = n - quotient * d;
    if (remainder < 0) {
      quotient -= 1;
      remainder += d;
    }
  } else {
    remainder = n % d;
    quotient = (n - remainder) / d;
  }
  const twice = 2 * remainder;
  const odd = quotient / 2 !== Math.floor(quotient / 2);
  return twice > d || (twice === d && odd) ? quotient + 1 : quotient;
}

/**
 * A day's rates of the target and of a source currency, and the same as doubles (exact: rates
 * are millionths below 2^53, else `convertMinor` works in BigInt).
 */
interface DayRate {
  day: string;
  target: bigint | undefined;
  source: string;
  sourceRate: bigint | undefined;
  targetNumber: number;
  sourceNumber: number;
}

/** Converts stored amounts (ten-thousandths of `source`) to `target`, as the page SQL would. */
export class MoneyConverter {
  private readonly toMinor: bigint;
  private readonly toMinorNumber: number;
  private readonly scale: number;
  /** The target currency's decimal places (ISO 4217 minor units). */
  readonly minorUnits: number;
  /** The rates asked last, and every source's asked on the same day: pages come in day order. */
  private last: DayRate = {
    day: "",
    target: undefined,
    source: "",
    sourceRate: undefined,
    targetNumber: Number.NaN,
    sourceNumber: Number.NaN,
  };
  private readonly sameDay = new Map<string, DayRate>();

  constructor(
    private readonly target: CurrencyCode,
    private readonly rates: DayRates,
  ) {
    const minorUnits = CURRENCIES[target].minorUnits;
    this.minorUnits = minorUnits;
    this.toMinor = 10n ** BigInt(4 - minorUnits);
    this.toMinorNumber = 10 ** (4 - minorUnits);
    this.scale = 10 ** minorUnits;
  }

  /**
   * The amount in the target currency, or null when a rate lacks (never served: a walk's count
   * refuses the range first, CONTRACT §3 rule 7). Whole numbers below 2^53 are worked in doubles
   * (exactly: `divHalfEvenSafe`), larger ones in BigInt.
   */
  convert(amountE4: unknown, source: string, day: string): number | null {
    const minor = this.convertMinor(amountE4, source, day);
    return minor === null ? null : minor / this.scale;
  }

  /** The target currency's minor units before `convert` divides them (exact below 2^53). */
  convertMinor(amountE4: unknown, source: string, day: string): number | null {
    if (amountE4 === null || amountE4 === undefined) return null;
    const amount = Number(amountE4);
    if (source === this.target) {
      if (amount >= 0 && Number.isSafeInteger(amount)) return divHalfEvenSafe(amount, this.toMinorNumber);
      return Number(divHalfEven(BigInt(amountE4 as bigint | string | number), this.toMinor));
    }
    const rates = this.ratesOn(day, source);
    const { target: targetRate, sourceRate } = rates;
    if (targetRate === undefined || sourceRate === undefined) return null;
    if (amount >= 0 && Number.isSafeInteger(amount)) {
      const numerator = amount * rates.targetNumber;
      const denominator = rates.sourceNumber * this.toMinorNumber;
      if (Number.isSafeInteger(numerator) && Number.isSafeInteger(denominator) && denominator > 0)
        return divHalfEvenSafe(numerator, denominator);
    }
    const exact = BigInt(amountE4 as bigint | string | number);
    return Number(divHalfEven(exact * targetRate, sourceRate * this.toMinor));
  }

  /**
   * The target's and `source`'s rates on `day`, looked up once per day and currency: a page's rows
   * change source currency from row to row within a day.
   */
  private ratesOn(day: string, source: string): DayRate {
    const last = this.last;
    if (last.day === day && last.source === source) return last;
    if (last.day !== day) this.sameDay.clear();
    let rates = this.sameDay.get(source);
    if (rates === undefined) {
      const target = last.day === day ? last.target : this.rates.rateOn(this.target, day);
      const sourceRate = this.rates.rateOn(source, day);
      rates = {
        day,
        target,
        source,
        sourceRate,
        targetNumber: Number(target),
        sourceNumber: Number(sourceRate),
      };
      this.sameDay.set(source, rates);
    }
    this.last = rates;
    return rates;
  }
}
