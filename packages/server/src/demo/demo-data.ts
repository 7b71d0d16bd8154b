/**
 * A pure, deterministic generator of a realistic demo region: brands, apps, grants, ECB-style
 * FX rates and daily campaign records. Same options, same output, on every run and machine,
 * so that the demo, its documentation and its tests can quote concrete numbers.
 *
 * Records are yielded one at a time (nothing is materialised) because `scale` 50–100 gives
 * millions of rows; everything that does not depend on the (day, campaign) pair is computed
 * once per day or once per campaign.
 */
import { fromEpochDay, isCalendarDate, toEpochDay } from "../calendar.js";
import { CURRENCIES, CURRENCY_CODES, type CurrencyCode } from "../currencies.js";
import type { FxRate, Grants, StoredRecord } from "../store/model/store.js";

/** What to generate: the region's today, how many data days, how big, which seed. */
export interface DemoOptions {
  /** `YYYY-MM-DD`, the region's today; data ends the day before. */
  today: string;
  /** Data days ending yesterday (today - 1) inclusive; default 400. */
  days?: number;
  /** Integer ≥ 1 multiplying the campaigns per (market, data source); default 1. */
  scale?: number;
  /** Integer seed of every random choice; default 42. */
  seed?: number;
}

/** One demo brand: its grants, apps, and what is stored for it (possibly more than granted). */
export interface DemoBrandPlan {
  brandId: string;
  name: string;
  /** Short lower-case token used in campaign and record ids (`acme`). */
  shortName: string;
  grants: Grants;
  apps: DemoAppPlan[];
  /** Markets the generated records cover: the granted ones and, for some brands, more. */
  storedMarkets: string[];
  /** Data sources the generated records cover: the granted ones and, for some brands, more. */
  storedDataSources: string[];
  /** Source currency of each stored market. */
  currencyByMarket: Record<string, CurrencyCode>;
}

/** One demo app; `null` means "all of the brand's grants". */
export interface DemoAppPlan {
  appClientId: string;
  name: string;
  markets: string[] | null;
  dataSources: string[] | null;
}

/** The whole demo region apart from the records, which {@link demoRecords} streams. */
export interface DemoPlan {
  brands: DemoBrandPlan[];
  fxRates: FxRate[];
  firstDay: string;
  lastDay: string;
}

// ---------------------------------------------------------------------------------------------
// Static catalogue

/** Source currency of each market the demo knows (euro-area markets report in EUR). */
const MARKET_CURRENCY: Record<string, CurrencyCode> = {
  AT: "EUR",
  AU: "AUD",
  BE: "EUR",
  CA: "CAD",
  CH: "CHF",
  DE: "EUR",
  DK: "DKK",
  ES: "EUR",
  FR: "EUR",
  GB: "GBP",
  IE: "EUR",
  IT: "EUR",
  JP: "JPY",
  KR: "KRW",
  NL: "EUR",
  NO: "NOK",
  PL: "PLN",
  PT: "EUR",
  SE: "SEK",
  US: "USD",
};

/** Relative media cost of a market (1 = Germany); big ad markets cost more per click. */
const MARKET_COST: Record<string, number> = {
  US: 1.4,
  GB: 1.15,
  DE: 1,
  FR: 0.9,
  NL: 0.95,
  SE: 0.9,
  JP: 1.05,
  KR: 0.85,
  ES: 0.7,
  IT: 0.7,
  PL: 0.45,
};

/** Relative audience size of a market; scales impressions. */
const MARKET_SIZE: Record<string, number> = {
  US: 3,
  JP: 1.6,
  DE: 1.3,
  GB: 1.2,
  FR: 1.1,
  KR: 0.9,
  IT: 0.9,
  ES: 0.8,
  PL: 0.6,
  NL: 0.5,
  SE: 0.4,
};

/** Markets and sources where brands run more campaigns (so counts are not uniform). */
const BIG_MARKETS = new Set(["US", "GB", "DE", "JP"]);
const BIG_SOURCES = new Set(["google_ads", "meta_ads"]);

/** Plausible channels of each data source, most common first. */
const SOURCE_CHANNELS: Record<string, readonly Channel[]> = {
  google_ads: ["search", "shopping", "display", "video"],
  meta_ads: ["social", "video", "display"],
  tiktok_ads: ["video", "social"],
  amazon_ads: ["shopping", "display", "video"],
  microsoft_ads: ["search", "shopping"],
  snapchat_ads: ["social", "video"],
};

type Channel = "search" | "social" | "display" | "video" | "shopping";

/** Typical behaviour of a channel: CTR, cost per click in EUR, conversion rate per click, reach. */
const CHANNEL_PROFILE: Record<
  Channel,
  { label: string; ctr: number; cpcEur: number; cvr: number; reach: number; weekday: number }
> = {
  search: { label: "Search", ctr: 0.032, cpcEur: 0.95, cvr: 0.045, reach: 0.35, weekday: 0 },
  shopping: { label: "Shopping", ctr: 0.014, cpcEur: 0.55, cvr: 0.035, reach: 0.7, weekday: 1 },
  social: { label: "Social", ctr: 0.011, cpcEur: 0.6, cvr: 0.015, reach: 1.2, weekday: 2 },
  display: { label: "Display", ctr: 0.0065, cpcEur: 0.4, cvr: 0.008, reach: 1.6, weekday: 0 },
  video: { label: "Video", ctr: 0.008, cpcEur: 0.3, cvr: 0.006, reach: 1.4, weekday: 2 },
};

/** Weekday multipliers (Sunday first) of the three weekday profiles: work-week, shopping, leisure. */
const WEEKDAY_PROFILES: readonly (readonly number[])[] = [
  [0.72, 1.05, 1.08, 1.07, 1.04, 0.95, 0.7],
  [1.12, 0.95, 0.93, 0.94, 0.97, 1.02, 1.15],
  [1.15, 0.92, 0.9, 0.92, 0.96, 1.08, 1.18],
];

/** Campaign themes, as marketers name them. */
const THEMES = [
  "Always On",
  "Brand",
  "Spring Sale",
  "Summer Collection",
  "Back to School",
  "Black Friday",
  "Holiday Gifting",
  "Prospecting",
  "Retargeting",
  "New Arrivals",
  "Clearance",
  "Competitor",
  "Generic",
  "Loyalty",
] as const;

/** Approximate EUR reference rates (units per 1 EUR) the FX walk starts from and prices use. */
const BASE_RATES: Record<Exclude<CurrencyCode, "EUR">, { rate: number; vol: number; drift?: number }> = {
  AUD: { rate: 1.65, vol: 0.005 },
  BRL: { rate: 5.9, vol: 0.008 },
  CAD: { rate: 1.48, vol: 0.004 },
  CHF: { rate: 0.95, vol: 0.003 },
  CNY: { rate: 7.8, vol: 0.003 },
  CZK: { rate: 25.1, vol: 0.002 },
  DKK: { rate: 7.46, vol: 0.0002 },
  GBP: { rate: 0.85, vol: 0.003 },
  HKD: { rate: 8.45, vol: 0.004 },
  HUF: { rate: 395, vol: 0.004 },
  IDR: { rate: 17500, vol: 0.004 },
  ILS: { rate: 4.0, vol: 0.006 },
  INR: { rate: 91, vol: 0.004 },
  ISK: { rate: 150, vol: 0.003 },
  JPY: { rate: 160, vol: 0.006 },
  KRW: { rate: 1450, vol: 0.005 },
  MXN: { rate: 20.5, vol: 0.007 },
  MYR: { rate: 4.9, vol: 0.004 },
  NOK: { rate: 11.6, vol: 0.005 },
  NZD: { rate: 1.8, vol: 0.005 },
  PHP: { rate: 62, vol: 0.004 },
  PLN: { rate: 4.3, vol: 0.003 },
  RON: { rate: 4.97, vol: 0.0008 },
  SEK: { rate: 11.4, vol: 0.004 },
  SGD: { rate: 1.45, vol: 0.003 },
  THB: { rate: 38, vol: 0.005 },
  TRY: { rate: 36, vol: 0.004, drift: 0.0008 },
  USD: { rate: 1.08, vol: 0.004 },
  ZAR: { rate: 20, vol: 0.008 },
};

/** Annual seasonality of each brand's business: peak day of year and amplitude. */
interface BrandSpec {
  brandId: string;
  name: string;
  shortName: string;
  storedMarkets: string[];
  storedDataSources: string[];
  /** Absent: the brand is granted exactly what is stored for it. */
  grants?: Grants;
  apps: DemoAppPlan[];
  seasonPeakDay: number;
  seasonAmplitude: number;
}

/**
 * The demo brands. Acme stores more than it is granted (markets ES, IT, NL and sources
 * amazon_ads, microsoft_ads are stored but not granted) so that filtering and 403 show;
 * the others store exactly their grants.
 */
const BRAND_SPECS: readonly BrandSpec[] = [
  {
    brandId: "brand-acme",
    name: "Acme Outdoor",
    shortName: "acme",
    storedMarkets: ["GB", "DE", "FR", "US", "SE", "ES", "IT", "NL"],
    storedDataSources: ["google_ads", "meta_ads", "tiktok_ads", "amazon_ads", "microsoft_ads"],
    grants: {
      markets: ["GB", "DE", "FR", "US", "SE"],
      dataSources: ["google_ads", "meta_ads", "tiktok_ads"],
    },
    apps: [
      { appClientId: "app-acme-analytics", name: "Acme Analytics", markets: null, dataSources: null },
      {
        appClientId: "app-acme-uk",
        name: "Acme UK Paid Media",
        markets: ["GB"],
        dataSources: ["google_ads", "meta_ads"],
      },
    ],
    seasonPeakDay: 165,
    seasonAmplitude: 0.22,
  },
  {
    brandId: "brand-globex",
    name: "Globex Retail",
    shortName: "globex",
    storedMarkets: ["US", "GB", "JP", "KR", "DE", "NL"],
    storedDataSources: ["google_ads", "amazon_ads", "meta_ads", "microsoft_ads"],
    apps: [{ appClientId: "app-globex-bi", name: "Globex BI", markets: null, dataSources: null }],
    seasonPeakDay: 332,
    seasonAmplitude: 0.18,
  },
  {
    brandId: "brand-initech",
    name: "Initech Software",
    shortName: "initech",
    storedMarkets: ["PL", "SE", "DE", "FR", "IT", "US"],
    storedDataSources: ["google_ads", "microsoft_ads", "meta_ads", "snapchat_ads"],
    apps: [
      { appClientId: "app-initech-dashboard", name: "Initech Dashboard", markets: null, dataSources: null },
      {
        appClientId: "app-initech-search",
        name: "Initech Search Team",
        markets: null,
        dataSources: ["google_ads", "microsoft_ads"],
      },
    ],
    seasonPeakDay: 280,
    seasonAmplitude: 0.1,
  },
];

const DEFAULT_DAYS = 400;
const DEFAULT_SCALE = 1;
const DEFAULT_SEED = 42;
/** FX history starts this many days before the first data day, so day one has a rate. */
const FX_LEAD_DAYS = 10;
/**
 * The FX walk starts on this day (a Monday), whatever today is: a day's rate is a function of
 * that day alone, so converted amounts (and the README's figures) do not change with the day the
 * demo runs. Only a range reaching further back (more than ~26 years of `--days`) starts earlier.
 */
const FX_WALK_START = toEpochDay("2000-01-03");
/** The day a drifting currency's rate is its base rate: drift counts weekdays from here. */
const FX_DRIFT_ANCHOR = toEpochDay("2026-01-01");
/** Share of (day, campaign) pairs with no delivery at all (paused, budget exhausted). */
const ZERO_DAY_SHARE = 0.01;
const TWO_POW_32 = 4294967296;
const GOLDEN = 0x9e3779b9;

// ---------------------------------------------------------------------------------------------
// Hashing: a 32-bit integer finaliser is enough for demo noise and costs a few nanoseconds.

/** lowbias32 (Chris Wellons): a well-mixing 32-bit hash finaliser. */
function mix(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of a string, for turning ids into stable random streams. */
function hashString(text: string, seed: number): number {
  let h = mix(seed ^ 0x2545f491);
  for (let i = 0; i < text.length; i++) h = mix(h ^ text.charCodeAt(i)) + i;
  return mix(h);
}

/** Uniform in [0, 1) from a hash value. */
function unit(h: number): number {
  return h / TWO_POW_32;
}

// ---------------------------------------------------------------------------------------------
// Options and plan

interface ResolvedOptions {
  today: string;
  days: number;
  scale: number;
  seed: number;
}

function resolveOptions(options: DemoOptions): ResolvedOptions {
  const { today, days = DEFAULT_DAYS, scale = DEFAULT_SCALE, seed = DEFAULT_SEED } = options;
  if (!isCalendarDate(today)) throw new RangeError(`demo: today must be a YYYY-MM-DD day, got ${today}`);
  if (!Number.isInteger(days) || days < 1)
    throw new RangeError(`demo: days must be an integer ≥ 1, got ${days}`);
  if (!Number.isInteger(scale) || scale < 1)
    throw new RangeError(`demo: scale must be an integer ≥ 1, got ${scale}`);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`demo: seed must be an integer, got ${seed}`);
  return { today, days, scale, seed };
}

/** The demo region for `options`: brands, apps, grants, FX rates and the data day range. */
export function planDemo(options: DemoOptions): DemoPlan {
  const { today, days, seed } = resolveOptions(options);
  const todayEpoch = toEpochDay(today);
  const brands = BRAND_SPECS.map((spec): DemoBrandPlan => {
    const currencyByMarket: Record<string, CurrencyCode> = {};
    for (const market of spec.storedMarkets) currencyByMarket[market] = MARKET_CURRENCY[market] ?? "EUR";
    const grants = spec.grants ?? { markets: spec.storedMarkets, dataSources: spec.storedDataSources };
    return {
      brandId: spec.brandId,
      name: spec.name,
      shortName: spec.shortName,
      grants: { markets: [...grants.markets], dataSources: [...grants.dataSources] },
      apps: spec.apps.map((app) => ({
        ...app,
        markets: app.markets && [...app.markets],
        dataSources: app.dataSources && [...app.dataSources],
      })),
      storedMarkets: [...spec.storedMarkets],
      storedDataSources: [...spec.storedDataSources],
      currencyByMarket,
    };
  });
  return {
    brands,
    fxRates: fxRates(todayEpoch - days - FX_LEAD_DAYS, todayEpoch, seed),
    firstDay: fromEpochDay(todayEpoch - days),
    lastDay: fromEpochDay(todayEpoch - 1),
  };
}

/** Weekday of an epoch day, 0 = Sunday (1970-01-01 was a Thursday). */
function weekday(epochDay: number): number {
  return (((epochDay + 4) % 7) + 7) % 7;
}

/** Decimals the ECB publishes for a rate of this size: about five significant digits. */
function rateDecimals(rate: number): number {
  if (rate < 10) return 4;
  if (rate < 100) return 3;
  if (rate < 1000) return 2;
  if (rate < 10000) return 1;
  return 0;
}

/**
 * ECB-style reference rates for every non-EUR currency on every weekday in [from, to]: a
 * mean-reverting random walk of the log rate, so rates wander realistically but stay plausible
 * however long the range. The walk runs from {@link FX_WALK_START}, not from `from`, so that a
 * day's rate does not depend on the range asked (nor on today).
 */
function fxRates(fromEpoch: number, toEpoch: number, seed: number): FxRate[] {
  const currencies = CURRENCY_CODES.filter((code): code is Exclude<CurrencyCode, "EUR"> => code !== "EUR");
  const state = currencies.map((code) => ({
    code,
    key: hashString(code, seed ^ 0x5bd1e995),
    deviation: 0,
  }));
  const rates: FxRate[] = [];
  for (let epoch = Math.min(fromEpoch, FX_WALK_START); epoch <= toEpoch; epoch++) {
    const wd = weekday(epoch);
    if (wd === 0 || wd === 6) continue;
    const date = fromEpochDay(epoch);
    // Weekdays since the drift anchor (negative before it), as the walk's steps are weekdays.
    const steps = ((epoch - FX_DRIFT_ANCHOR) * 5) / 7;
    for (const s of state) {
      const base = BASE_RATES[s.code];
      // Sum of three uniforms: a cheap, bounded stand-in for a normal shock.
      const h1 = mix(s.key ^ mix(epoch + GOLDEN));
      const h2 = mix(h1 + GOLDEN);
      const h3 = mix(h2 + GOLDEN);
      const shock = (unit(h1) + unit(h2) + unit(h3) - 1.5) * 2;
      s.deviation = s.deviation * 0.985 + shock * base.vol;
      if (epoch < fromEpoch) continue;
      const rate = base.rate * Math.exp(s.deviation + (base.drift ?? 0) * steps);
      const decimals = rateDecimals(rate);
      const scaled = Math.round(rate * 10 ** decimals);
      rates.push({ currency: s.code, date, rateE6: BigInt(scaled) * 10n ** BigInt(6 - decimals) });
    }
  }
  return rates;
}

// ---------------------------------------------------------------------------------------------
// Campaigns

interface Campaign {
  market: string;
  dataSource: string;
  channel: string;
  campaignId: string;
  campaignName: string;
  currency: CurrencyCode;
  /** Brand-wide index as a string: the last part of the record id. */
  indexText: string;
  key: number;
  weekdayProfile: number;
  baseImpressions: number;
  ctr: number;
  /** Cost per click in the currency's minor unit (cents, or yen for JPY). */
  cpcMinor: number;
  cvr: number;
  /** Average order value in the currency's minor unit. */
  aovMinor: number;
  /** Ten-thousandths per minor unit: 100 for cents, 10000 for whole-unit currencies. */
  e4PerMinor: number;
  /** Slow growth or decline of this campaign along the long-period wave. */
  trendAmplitude: number;
}

/** Campaigns of one (market, data source) pair per unit of scale. */
function baseCampaigns(market: string, dataSource: string): number {
  return BIG_MARKETS.has(market) && BIG_SOURCES.has(dataSource) ? 2 : 1;
}

function campaignsPerRound(brand: DemoBrandPlan): number {
  let total = 0;
  for (const market of brand.storedMarkets) {
    for (const dataSource of brand.storedDataSources) total += baseCampaigns(market, dataSource);
  }
  return total;
}

function brandSpec(brand: DemoBrandPlan): BrandSpec | undefined {
  return BRAND_SPECS.find((spec) => spec.brandId === brand.brandId);
}

/**
 * The brand's campaigns. Round r (0 ≤ r < scale) adds `base` campaigns per (market, source),
 * so the campaigns of a smaller scale keep their ids and indices at a larger one.
 */
function buildCampaigns(brand: DemoBrandPlan, scale: number, seed: number): Campaign[] {
  const brandWord = brand.name.split(" ")[0] ?? brand.name;
  const campaigns: Campaign[] = [];
  for (let round = 0; round < scale; round++) {
    for (const market of brand.storedMarkets) {
      for (const dataSource of brand.storedDataSources) {
        const base = baseCampaigns(market, dataSource);
        const channels = SOURCE_CHANNELS[dataSource] ?? ["display"];
        const comboKey = hashString(`${brand.brandId}/${market}/${dataSource}`, seed);
        for (let j = 0; j < base; j++) {
          const number = round * base + j;
          const key = mix(comboKey ^ mix(number + GOLDEN));
          const channel = channels[(number + (comboKey % channels.length)) % channels.length] ?? "display";
          const profile = CHANNEL_PROFILE[channel];
          const currency = brand.currencyByMarket[market] ?? MARKET_CURRENCY[market] ?? "EUR";
          const fx = currency === "EUR" ? 1 : BASE_RATES[currency].rate;
          const minorUnits = CURRENCIES[currency].minorUnits;
          const minorPerUnit = 10 ** minorUnits;
          const r1 = unit(mix(key + 1));
          const r2 = unit(mix(key + 2));
          const r3 = unit(mix(key + 3));
          const r4 = unit(mix(key + 4));
          const r5 = unit(mix(key + 5));
          const r6 = unit(mix(key + 6));
          const themeIndex = (comboKey + number) % THEMES.length;
          const cycle = Math.floor(number / THEMES.length);
          const theme = `${THEMES[themeIndex] ?? "Always On"}${cycle > 0 ? ` ${cycle + 1}` : ""}`;
          const sourceShort = dataSource.replace(/_ads$/, "");
          campaigns.push({
            market,
            dataSource,
            channel,
            campaignId: `cmp-${brand.shortName}-${market.toLowerCase()}-${sourceShort}-${String(number + 1).padStart(4, "0")}`,
            campaignName: `${brandWord} ${market} ${profile.label} – ${theme}`,
            currency,
            indexText: String(campaigns.length),
            key,
            weekdayProfile: profile.weekday,
            // Log-uniform over ~1.5 decades: a few big campaigns, many small ones.
            baseImpressions: 2500 * (MARKET_SIZE[market] ?? 0.5) * profile.reach * 10 ** (r1 * 1.6),
            ctr: Math.min(0.04, Math.max(0.005, profile.ctr * (0.6 + 0.8 * r2))),
            cpcMinor: profile.cpcEur * (MARKET_COST[market] ?? 0.8) * (0.7 + 0.6 * r3) * fx * minorPerUnit,
            cvr: profile.cvr * (0.5 + r4),
            aovMinor: (35 + 120 * r5) * (MARKET_COST[market] ?? 0.8) * fx * minorPerUnit,
            e4PerMinor: 10000 / minorPerUnit,
            trendAmplitude: (r6 - 0.5) * 0.6,
          });
        }
      }
    }
  }
  return campaigns;
}

// ---------------------------------------------------------------------------------------------
// Records

/** The exact number of records {@link demoRecords} yields for `brand`, without generating them. */
export function demoRecordCount(plan: DemoPlan, brand: DemoBrandPlan, options: DemoOptions): number {
  const { scale } = resolveOptions(options);
  const days = toEpochDay(plan.lastDay) - toEpochDay(plan.firstDay) + 1;
  return Math.max(0, days) * campaignsPerRound(brand) * scale;
}

/**
 * Streams `brand`'s records: every day of [plan.firstDay, plan.lastDay] (ascending) times every
 * campaign. Metrics depend only on (seed, brand, day, campaign), never on `days` or on `today`,
 * so a day's numbers do not change when the demo is reseeded later.
 */
export function* demoRecords(
  plan: DemoPlan,
  brand: DemoBrandPlan,
  options: DemoOptions,
): Generator<StoredRecord> {
  const { scale, seed } = resolveOptions(options);
  const spec = brandSpec(brand);
  const brandKey = hashString(brand.brandId, seed);
  const seasonPeak = spec?.seasonPeakDay ?? brandKey % 365;
  const seasonAmplitude = spec?.seasonAmplitude ?? 0.15;
  const campaigns = buildCampaigns(brand, scale, seed);
  const firstEpoch = toEpochDay(plan.firstDay);
  const lastEpoch = toEpochDay(plan.lastDay);
  const dayFactors = new Float64Array(WEEKDAY_PROFILES.length);

  for (let epoch = firstEpoch; epoch <= lastEpoch; epoch++) {
    const date = fromEpochDay(epoch);
    const idPrefix = `${brand.shortName}-${date.slice(0, 4)}${date.slice(5, 7)}${date.slice(8, 10)}-`;
    const dayKey = mix(brandKey ^ mix(epoch * 0x27d4eb2d + GOLDEN));
    // Day of year from the date itself; leap years shift the peak by a day, which is harmless.
    const dayOfYear = epoch - toEpochDay(`${date.slice(0, 4)}-01-01`);
    const annual = 1 + seasonAmplitude * Math.cos((2 * Math.PI * (dayOfYear - seasonPeak)) / 365);
    const wd = weekday(epoch);
    for (let p = 0; p < WEEKDAY_PROFILES.length; p++)
      dayFactors[p] = annual * (WEEKDAY_PROFILES[p]?.[wd] ?? 1);
    // A two-year wave: over a 400-day window it reads as a slow trend up or down.
    const wave = Math.sin((2 * Math.PI * epoch) / 730);

    for (const c of campaigns) {
      let h = mix(c.key ^ dayKey);
      let impressions = 0;
      let clicks = 0;
      let spendMinor = 0;
      let conversionsCenti = 0;
      let revenueMinor = 0;
      if (unit(h) >= ZERO_DAY_SHARE) {
        h = mix(h + GOLDEN);
        const u1 = unit(h);
        h = mix(h + GOLDEN);
        const u2 = unit(h);
        h = mix(h + GOLDEN);
        const u3 = unit(h);
        h = mix(h + GOLDEN);
        const u4 = unit(h);
        h = mix(h + GOLDEN);
        const u5 = unit(h);
        const factor = (dayFactors[c.weekdayProfile] ?? 1) * (1 + c.trendAmplitude * wave) * (0.7 + 0.6 * u1);
        impressions = Math.min(500_000, Math.max(100, Math.round(c.baseImpressions * factor)));
        clicks = Math.round(impressions * c.ctr * (0.8 + 0.4 * u2));
        spendMinor = Math.round(clicks * c.cpcMinor * (0.85 + 0.3 * u3));
        conversionsCenti = Math.round(clicks * c.cvr * (0.4 + 1.2 * u4) * 100);
        revenueMinor = Math.round(conversionsCenti * 0.01 * c.aovMinor * (0.75 + 0.5 * u5));
      }
      yield {
        recordId: idPrefix + c.indexText,
        date,
        market: c.market,
        dataSource: c.dataSource,
        channel: c.channel,
        campaignId: c.campaignId,
        campaignName: c.campaignName,
        impressions,
        clicks,
        spendE4: BigInt(spendMinor * c.e4PerMinor),
        conversionsE4: BigInt(conversionsCenti * 100),
        revenueE4: BigInt(revenueMinor * c.e4PerMinor),
        currency: c.currency,
      };
    }
  }
}
