/** `mdq grant add|remove|list`: the markets and data sources a brand may read (CONTRACT §3 rule 1). */
import { Command } from "commander";
import { connectAdmin, type GrantsInfo } from "../admin-client.js";
import { type CommonFlags, dataSources, markets, withCommonFlags } from "../operator-options.js";
import { emit, list } from "../output.js";
import { UsageError } from "../usage-error.js";

type GrantFlags = CommonFlags & { brand: string; markets?: string[]; dataSources?: string[] };

/** `mdq grant` and its subcommands. */
export function grantCommand(): Command {
  return new Command("grant")
    .description("Add, remove and list what a brand may read, by market and data source.")
    .addCommand(grantChangeCommand("add"))
    .addCommand(grantChangeCommand("remove"))
    .addCommand(grantListCommand());
}

/** The human form of a brand's grants. */
function describeGrants(grants: GrantsInfo): string {
  return [
    `Grants of brand ${grants.brandId}:`,
    `  markets:       ${list(grants.markets)}`,
    `  data sources:  ${list(grants.dataSources)}`,
  ].join("\n");
}

function grantChangeCommand(verb: "add" | "remove"): Command {
  return withCommonFlags(
    new Command(verb)
      .description(
        verb === "add"
          ? "Let a brand read more markets and/or data sources."
          : "Stop a brand (and its apps) reading some markets and/or data sources.",
      )
      .requiredOption("--brand <brandId>", "the brand")
      .option("--markets <codes>", "markets, ISO 3166-1 alpha-2, e.g. GB,DE", markets)
      .option("--data-sources <ids>", "data sources, e.g. google_ads,meta_ads", dataSources),
    `mdq grant ${verb} --brand brand-acme --markets GB,DE --data-sources google_ads`,
  ).action(async (flags: GrantFlags) => {
    if (flags.markets === undefined && flags.dataSources === undefined) {
      throw new UsageError(`grant ${verb}: give --markets, --data-sources, or both`);
    }
    const admin = await connectAdmin(flags);
    const answer = await admin.post<GrantsInfo>(verb === "add" ? "/admin/grants" : "/admin/grants/remove", {
      brandId: flags.brand,
      ...(flags.markets === undefined ? {} : { markets: flags.markets }),
      ...(flags.dataSources === undefined ? {} : { dataSources: flags.dataSources }),
    });
    emit(flags.json, answer, describeGrants);
  });
}

function grantListCommand(): Command {
  return withCommonFlags(
    new Command("list")
      .description("Show a brand's grants.")
      .requiredOption("--brand <brandId>", "the brand"),
    "mdq grant list --brand brand-acme",
  ).action(async (flags: CommonFlags & { brand: string }) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.get<GrantsInfo>(
      `/admin/grants?${new URLSearchParams({ brandId: flags.brand })}`,
    );
    emit(flags.json, answer, describeGrants);
  });
}
