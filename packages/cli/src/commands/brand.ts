/** `mdq brand create` and `mdq brand list`: the region's brands (tenants that own data). */
import { Command } from "commander";
import { type BrandInfo, connectAdmin } from "../admin-client.js";
import { brandId, type CommonFlags, name, withCommonFlags } from "../operator-options.js";
import { emit, table } from "../output.js";

/** `mdq brand` and its subcommands. */
export function brandCommand(): Command {
  return new Command("brand")
    .description("Create and list brands.")
    .addCommand(brandCreateCommand())
    .addCommand(brandListCommand());
}

function brandCreateCommand(): Command {
  return withCommonFlags(
    new Command("create")
      .description("Create a brand; its id is derived from the name unless --id is given.")
      .requiredOption("--name <name>", "the brand's name", name)
      .option("--id <brandId>", "the brand id (brand client ID): 2-63 of a-z, 0-9 and -", brandId),
    'mdq brand create --name "Acme Foods" --id brand-acme',
  ).action(async (flags: CommonFlags & { name: string; id?: string }) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.post<{ brand: BrandInfo }>("/admin/brands", {
      name: flags.name,
      ...(flags.id === undefined ? {} : { brandId: flags.id }),
    });
    emit(flags.json, answer, ({ brand }) => `Created brand ${brand.brandId} (${brand.name}).`);
  });
}

function brandListCommand(): Command {
  return withCommonFlags(
    new Command("list").description("List the region's brands."),
    "mdq brand list",
  ).action(async (flags: CommonFlags) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.get<{ brands: BrandInfo[] }>("/admin/brands");
    emit(flags.json, answer, ({ brands }) =>
      brands.length === 0
        ? "No brands yet: create one with `mdq brand create --name NAME`."
        : table(
            ["BRAND", "NAME", "CREATED AT"],
            brands.map((brand) => [brand.brandId, brand.name, brand.createdAt]),
          ),
    );
  });
}
