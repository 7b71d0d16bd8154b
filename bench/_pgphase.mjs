import { readRecordsFile } from "../packages/server/dist/src/load/records-file.js";
import { openPostgresStore, migrateDatabase } from "../packages/server/dist/src/index.js";
import pg from "pg";
const c = new pg.Client({ connectionString: "postgres://root@127.0.0.1:5432/postgres" }); await c.connect();
await c.query("DROP DATABASE IF EXISTS wt19_phase WITH (FORCE)"); await c.query("CREATE DATABASE wt19_phase"); await c.end();
const url = "postgres://root@127.0.0.1:5432/wt19_phase";
await migrateDatabase(url);
const t = () => performance.now();
let a = t();
const file = await readRecordsFile(process.argv[2]);
console.log("read+check", ((t() - a) / 1000).toFixed(2));
a = t(); await file.exportStored("/tmp/wt19/out.csv", "csv"); console.log("export csv", ((t() - a) / 1000).toFixed(2)); file.close();
const store = await openPostgresStore({ url, poolSize: 2 });
await store.createBrand({ brandId: "b", name: "b", createdAt: new Date() });
for (let i = 0; i < 2; i++) {
  a = t();
  await store.replaceRecordsFromStoredFile("b", { path: "/tmp/wt19/out.csv", sorted: true, onReplacing: () => console.log(" staged", ((t() - a) / 1000).toFixed(2)) }, { processingDate: "2026-01-01", source: "x" });
  console.log("replace", ((t() - a) / 1000).toFixed(2));
}
await store.close();
