/** `mdq status`: each brand of the region at a glance (grants, apps, data, last publish, readiness). */
import { Command } from "commander";
import { connectAdmin, type RegionStatus } from "../admin-client.js";
import { type CommonFlags, withCommonFlags } from "../operator-options.js";
import { count, emit, list, orNone, table } from "../output.js";

/** The human form of `GET /admin/status`: a table of brands, then a table of their grants. */
export function describeStatus(status: RegionStatus): string {
  const heading = `Region ${status.region}, today ${status.today}: ${status.brands.length} brand${status.brands.length === 1 ? "" : "s"}.`;
  if (status.brands.length === 0) return `${heading}\nCreate one with \`mdq brand create --name NAME\`.`;
  const brands = table(
    [
      "BRAND",
      "NAME",
      "APPS",
      "ROWS",
      "FIRST DAY",
      "LAST DAY",
      "LAST PUBLISHED",
      "PUBLISHED AT",
      "READY TODAY",
    ],
    status.brands.map((brand) => [
      brand.brandId,
      brand.name,
      `${brand.activeApps} active / ${brand.apps}`,
      count(brand.rows),
      orNone(brand.firstDay),
      orNone(brand.lastDay),
      orNone(brand.lastPublishedDate),
      orNone(brand.lastPublishedAt),
      brand.readyToday ? "yes" : "no",
    ]),
  );
  const grants = table(
    ["BRAND", "GRANTED MARKETS", "GRANTED DATA SOURCES"],
    status.brands.map((brand) => [brand.brandId, list(brand.grants.markets), list(brand.grants.dataSources)]),
  );
  return `${heading}\n\n${brands}\n\n${grants}${describeUnreadable(status)}`;
}

/**
 * The days a brand cannot read (issue 57): rows stored in a currency with no FX rate on or before
 * their day, so that every read over them fails; nothing when every day is readable.
 */
function describeUnreadable(status: RegionStatus): string {
  const rows = status.brands.flatMap((brand) =>
    (brand.unreadableDays ?? []).map((days) => [
      brand.brandId,
      days.currency,
      days.from === days.to ? days.from : `${days.from}..${days.to}`,
      count(days.days),
      orNone(days.firstRate),
    ]),
  );
  if (rows.length === 0) return "";
  const unreadable = table(["BRAND", "CURRENCY", "DAYS", "COUNT", "FIRST RATE"], rows);
  return (
    "\n\nDays the brand cannot read (no FX rate on or before them: every read over them fails with " +
    `UNSUPPORTED_CURRENCY until the rates are loaded with \`mdq fx load\`):\n${unreadable}`
  );
}

/** `mdq status`. */
export function statusCommand(): Command {
  return withCommonFlags(
    new Command("status").description(
      "Show each brand: grants, apps, rows and their days, last publish, and whether today is ready.",
    ),
    "mdq status --data /var/lib/mdq/uk",
  ).action(async (flags: CommonFlags) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.get<RegionStatus>("/admin/status");
    emit(flags.json, answer, describeStatus);
  });
}
