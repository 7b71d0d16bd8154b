// A plain GraphQL walk of a range, as a script without the SDK would write it: every field, the
// day sort, pages of 5000 asked one after the other until the answer says there is no next page.
// What bench/export.mjs times against the export, and bench/sync.mjs counts against the SDK.

const FIELDS =
  "recordId date market dataSource channel campaignId campaignName impressions clicks spend conversions revenue currency";

/** The rows of `range` (`{from, to}`) of brand `brand`, walked through `fetchFn` with `token`. */
export async function walkDayPages(fetchFn, base, token, brand, range) {
  let rows = 0;
  for (let page = 1; ; page += 1) {
    const response = await fetchFn(`${base}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        query: `query($c: ID!, $r: DateRangeInput!, $p: Int!) { marketingRecords(clientId: $c, dateRange: $r,
          sort: [{field: DATE_DAY, direction: ASC}], pagination: {page: $p, pageSize: 5000}) { ${FIELDS} } }`,
        variables: { c: brand, r: range, p: page },
      }),
    });
    const body = await response.json();
    rows += body.data.marketingRecords.length;
    if (!body.extensions.pageInfo.marketingRecords.hasNextPage) return rows;
  }
}
