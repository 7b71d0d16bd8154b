/**
 * What every SQL engine answers with the same statements, written once: the brand directory's
 * reads, readiness, a brand's data status, and the records and aggregate pages (page-reads.ts). An engine
 * supplies how it runs one statement, its dialect, how its rows read as the store's types, and
 * its read snapshots.
 */
import {
  brandVersionOf,
  type DataChanges,
  type DataChangesRequest,
  readDataChanges,
} from "./data-versions.js";
import {
  type ExportQuery,
  type ExportSnapshot,
  openExport,
  type RecordExport,
  type RecordExports,
} from "./export/record-export.js";
import {
  type FxRateStarts,
  fxRateStartsOf,
  planFxRateStarts,
  planUnreadableDays,
  type UnreadableDays,
  unreadableDaysOf,
} from "./fx-coverage.js";
import { type InSnapshot, readAggregatePage, readRecordsPages } from "./page-reads.js";
import { type PlannedSql, planDataStatus, planReadiness } from "./query-planner.js";
import type { AggregateQuery, RecordsQuery } from "./query-request.js";
import type { RowMapping } from "./row-mapping.js";
import type { SqlDialect } from "./sql-dialect.js";
import type {
  App,
  Brand,
  BrandDataStatus,
  Grants,
  PageResult,
  ReadinessFacts,
  RecordsPage,
} from "./store.js";
import { WalkMemory } from "./walk-memory.js";

type Row = Record<string, unknown>;

/** The shared reads of the DuckDB and PostgreSQL stores, bulk exports included. */
export abstract class SqlStore implements RecordExports {
  protected abstract readonly dialect: SqlDialect;
  protected abstract readonly rowsAs: RowMapping;
  /** Runs `read` with a reader of one snapshot, so a page, its count and data version agree. */
  protected abstract readonly snapshot: InSnapshot;
  /** Runs one statement on any connection. */
  protected abstract rows(sql: string, params?: PlannedSql["params"]): Promise<Row[]>;
  /**
   * Opens an export's snapshot: a connection of its own in one read transaction. `alone` says,
   * whenever asked, whether it is the only export open (then it may read ahead).
   */
  protected abstract exportSnapshot(alone: () => boolean): Promise<ExportSnapshot>;
  /** Exports whose snapshot is open. */
  private exportsOpen = 0;

  async openRecordExport(query: ExportQuery): Promise<RecordExport> {
    this.exportsOpen += 1;
    let counted = true;
    const closed = () => {
      if (counted) this.exportsOpen -= 1;
      counted = false;
    };
    let snapshot: ExportSnapshot;
    try {
      snapshot = await this.exportSnapshot(() => this.exportsOpen === 1);
    } catch (error) {
      closed();
      throw error;
    }
    return openExport(
      {
        ...snapshot,
        async end() {
          closed();
          await snapshot.end();
        },
      },
      query,
    );
  }

  async findBrand(brandId: string): Promise<Brand | undefined> {
    const [row] = await this.rows(`${this.brandSelect()} WHERE brand_id = ${this.dialect.placeholder(1)}`, [
      brandId,
    ]);
    return row ? this.rowsAs.brand(row) : undefined;
  }

  async listBrands(): Promise<Brand[]> {
    return (await this.rows(`${this.brandSelect()} ORDER BY brand_id`)).map((row) => this.rowsAs.brand(row));
  }

  async findApp(appClientId: string): Promise<App | undefined> {
    const [row] = await this.rows(
      `${this.appSelect()} WHERE app_client_id = ${this.dialect.placeholder(1)}`,
      [appClientId],
    );
    return row ? this.rowsAs.app(row) : undefined;
  }

  async listApps(brandId?: string): Promise<App[]> {
    const rows =
      brandId === undefined
        ? await this.rows(`${this.appSelect()} ORDER BY brand_id, app_client_id`)
        : await this.rows(
            `${this.appSelect()} WHERE brand_id = ${this.dialect.placeholder(1)} ORDER BY app_client_id`,
            [brandId],
          );
    return rows.map((row) => this.rowsAs.app(row));
  }

  async brandGrants(brandId: string): Promise<Grants> {
    return this.rowsAs.grants(
      await this.rows(
        `SELECT kind, value FROM grants WHERE brand_id = ${this.dialect.placeholder(1)} ORDER BY value`,
        [brandId],
      ),
    );
  }

  /** What walks of records pages learned, reused by their later pages (walk-memory.ts). */
  private readonly walks = new WalkMemory();

  queryRecords(query: RecordsQuery, pages = 1): Promise<RecordsPage[]> {
    return this.snapshot((reader) => readRecordsPages(reader, query, this.walks, pages));
  }

  queryAggregate(query: AggregateQuery): Promise<PageResult<Row>> {
    return this.snapshot((reader) => readAggregatePage(reader, query, this.walks));
  }

  async readiness(brandId: string, processingDate: string, grants: Grants): Promise<ReadinessFacts> {
    const { sql, params } = planReadiness(brandId, processingDate, grants, this.dialect);
    const [row] = await this.rows(sql, params);
    return { ...this.rowsAs.readiness(row), dataVersion: brandVersionOf(row).toString() };
  }

  dataChanges(request: DataChangesRequest): Promise<DataChanges> {
    return this.snapshot((reader) => readDataChanges(reader, request));
  }

  async brandDataStatus(brandId: string): Promise<BrandDataStatus> {
    const { sql, params } = planDataStatus(brandId, this.dialect);
    const [row] = await this.rows(sql, params);
    return this.rowsAs.dataStatus(row);
  }

  async fxRateStarts(): Promise<FxRateStarts> {
    const { sql, params } = planFxRateStarts(this.dialect);
    return fxRateStartsOf(await this.rows(sql, params));
  }

  async unreadableDays(brandId?: string): Promise<UnreadableDays[]> {
    const { sql, params } = planUnreadableDays(this.dialect, brandId);
    return unreadableDaysOf(await this.rows(sql, params));
  }

  private brandSelect(): string {
    return `SELECT brand_id, name, ${this.instantColumn("created_at")} FROM brands`;
  }

  private appSelect(): string {
    return `SELECT app_client_id, brand_id, name, secret_hash, previous_secret_hash,
      ${this.instantColumn("previous_secret_expires_at")}, markets, data_sources,
      ${this.instantColumn("revoked_at")}, ${this.instantColumn("created_at")} FROM apps`;
  }

  /** A timestamp column under its own name, read as the row mapping expects. */
  private instantColumn(column: string): string {
    return `${this.dialect.instant(column)} AS ${column}`;
  }
}
