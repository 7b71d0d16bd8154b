/**
 * The brand directory's reads (directory-plan.ts), run as one statement each on any connection
 * and read through the engine's row mapping.
 */
import type { PlannedSql, SqlDialect } from "../../model/engine.js";
import type { App, Brand, Grants } from "../../model/store.js";
import type { RowMapping } from "../../sql/row-mapping.js";
import { planApps, planBrands, planGrants } from "./directory-plan.js";

type Row = Record<string, unknown>;

/** What the directory's reads run on: one statement on any connection, the dialect, the row mapping. */
export interface DirectoryRows {
  readonly dialect: SqlDialect;
  readonly rowsAs: RowMapping;
  rows(sql: string, params?: PlannedSql["params"]): Promise<Row[]>;
}

async function rowsOf(on: DirectoryRows, plan: PlannedSql): Promise<Row[]> {
  return on.rows(plan.sql, plan.params);
}

/** The brand `brandId`, if it exists. */
export async function readBrand(on: DirectoryRows, brandId: string): Promise<Brand | undefined> {
  const [row] = await rowsOf(on, planBrands(brandId, on.dialect));
  return row ? on.rowsAs.brand(row) : undefined;
}

/** Every brand, by id. */
export async function readBrands(on: DirectoryRows): Promise<Brand[]> {
  return (await rowsOf(on, planBrands(null, on.dialect))).map((row) => on.rowsAs.brand(row));
}

/** The app `appClientId`, if it exists. */
export async function readApp(on: DirectoryRows, appClientId: string): Promise<App | undefined> {
  const [row] = await rowsOf(on, planApps({ key: appClientId }, on.dialect));
  return row ? on.rowsAs.app(row) : undefined;
}

/** A brand's apps, or every app when `brandId` is undefined. */
export async function readApps(on: DirectoryRows, brandId?: string): Promise<App[]> {
  const filter = brandId === undefined ? null : { brandId };
  return (await rowsOf(on, planApps(filter, on.dialect))).map((row) => on.rowsAs.app(row));
}

/** A brand's grants. */
export async function readGrants(on: DirectoryRows, brandId: string): Promise<Grants> {
  return on.rowsAs.grants(await rowsOf(on, planGrants(brandId, on.dialect)));
}
