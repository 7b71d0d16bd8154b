/**
 * What every SQL engine answers with the same statements, written once: the brand directory's
 * reads, readiness, a brand's data status, and the records and aggregate pages (reads/records/records-reader.ts). An engine
 * supplies how it runs one statement, its dialect, how its rows read as the store's types, and
 * its read snapshots.
 */

import type { InSnapshot, PlannedSql, SqlDialect } from "./model/engine.js";
import type { AggregateQuery, RecordsQuery } from "./model/query-request.js";
import type {
  App,
  Brand,
  BrandDataStatus,
  DataChanges,
  DataChangesRequest,
  FxRateStarts,
  Grants,
  PageResult,
  ReadinessFacts,
  RecordsPage,
  UnreadableDays,
} from "./model/store.js";
import { readAggregatePage } from "./reads/aggregate/aggregate-reader.js";
import {
  type DirectoryRows,
  readApp,
  readApps,
  readBrand,
  readBrands,
  readGrants,
} from "./reads/directory/directory-reader.js";
import {
  type ExportQuery,
  type ExportSnapshot,
  openExport,
  type RecordExport,
  type RecordExports,
} from "./reads/export/record-export.js";
import { readFxRateStarts, readUnreadableDays } from "./reads/fx-coverage/fx-coverage-reader.js";
import { readRecordsPages } from "./reads/records/records-reader.js";
import {
  readDataChanges,
  readDataStatus,
  readReadiness,
  type VersionRows,
} from "./reads/versions/versions-reader.js";
import { WalkMemory } from "./reads/walk-memory.js";
import type { RowMapping } from "./sql/row-mapping.js";

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
  /** What the reads on any connection run on (reads/directory, reads/versions). */
  private anyConnection: (DirectoryRows & VersionRows) | undefined;

  /** The engine's statements on any connection, its dialect and row mapping, for the reads. */
  private get on(): DirectoryRows & VersionRows {
    this.anyConnection ??= {
      dialect: this.dialect,
      rowsAs: this.rowsAs,
      rows: (sql, params) => this.rows(sql, params),
    };
    return this.anyConnection;
  }

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

  findBrand(brandId: string): Promise<Brand | undefined> {
    return readBrand(this.on, brandId);
  }

  listBrands(): Promise<Brand[]> {
    return readBrands(this.on);
  }

  findApp(appClientId: string): Promise<App | undefined> {
    return readApp(this.on, appClientId);
  }

  listApps(brandId?: string): Promise<App[]> {
    return readApps(this.on, brandId);
  }

  brandGrants(brandId: string): Promise<Grants> {
    return readGrants(this.on, brandId);
  }

  /** What walks of records pages learned, reused by their later pages (walk-memory.ts). */
  private readonly walks = new WalkMemory();

  queryRecords(query: RecordsQuery, pages = 1): Promise<RecordsPage[]> {
    return this.snapshot((reader) => readRecordsPages(reader, query, this.walks, pages));
  }

  queryAggregate(query: AggregateQuery): Promise<PageResult<Row>> {
    return this.snapshot((reader) => readAggregatePage(reader, query, this.walks));
  }

  readiness(brandId: string, processingDate: string, grants: Grants): Promise<ReadinessFacts> {
    return readReadiness(this.on, { brandId, processingDate, grants });
  }

  dataChanges(request: DataChangesRequest): Promise<DataChanges> {
    return readDataChanges(this.on, request);
  }

  brandDataStatus(brandId: string): Promise<BrandDataStatus> {
    return readDataStatus(this.on, brandId);
  }

  fxRateStarts(): Promise<FxRateStarts> {
    return readFxRateStarts(this.on);
  }

  unreadableDays(brandId?: string): Promise<UnreadableDays[]> {
    return readUnreadableDays(this.on, brandId);
  }
}
