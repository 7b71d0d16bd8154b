// Before anything is timed, every contender answers each distinct request of a scenario once and
// must agree with MDQ on DuckDB: the same bytes (yoga, bare routes), the same data (MDQ on
// PostgreSQL), the same rows in the same order (PostGraphile), a JWT access token (token issuers).

/** Sends one autocannon-style request with fetch; resolves to status and body text. */
export async function send(url, request) {
  const response = await fetch(`${url}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, text: await response.text() };
}

class Disagreement extends Error {
  constructor(scenario, contender, message) {
    super(`${scenario}: ${contender} answers differently from MDQ (DuckDB): ${message}`);
    this.name = "Disagreement";
  }
}

function firstDifference(a, b) {
  let index = 0;
  while (index < a.length && a[index] === b[index]) index += 1;
  return `bytes differ at ${index}: …${a.slice(Math.max(0, index - 40), index + 60)}… vs …${b.slice(Math.max(0, index - 40), index + 60)}…`;
}

function parseGraphql(scenario, contender, answer) {
  if (answer.status !== 200)
    throw new Disagreement(scenario, contender, `HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
  const body = JSON.parse(answer.text);
  if (body.errors) throw new Disagreement(scenario, contender, JSON.stringify(body.errors).slice(0, 300));
  return body;
}

function checkToken(scenario, contender, answer) {
  if (answer.status !== 200)
    throw new Disagreement(scenario, contender, `HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
  const token = JSON.parse(answer.text).access_token;
  const header = JSON.parse(Buffer.from(String(token).split(".")[0], "base64url").toString());
  if (header.alg !== "EdDSA" || header.typ !== "at+jwt")
    throw new Disagreement(
      scenario,
      contender,
      `the access token is not an EdDSA at+jwt: ${JSON.stringify(header)}`,
    );
  return { alg: header.alg, bytes: answer.text.length };
}

/**
 * Checks `contender`'s answers to `requests` against MDQ on DuckDB's answers to `reference`
 * (the same questions, index for index). Returns a short note of what was compared; throws a
 * Disagreement otherwise.
 */
export async function verifyContender({ scenario, contender, url, requests, referenceUrl, reference }) {
  if (scenario === "token") {
    const { alg, bytes } = checkToken(scenario, contender, await send(url, requests[0]));
    return `JWT access token (${alg}, ${bytes}-byte answer)`;
  }
  let rows = 0;
  for (let index = 0; index < requests.length; index += 1) {
    const answer = await send(url, requests[index]);
    const expected = await send(referenceUrl, reference[index]);
    const expectedBody = parseGraphql(scenario, "mdq-duckdb", expected);
    const body = contender === "postgraphile" ? null : parseGraphql(scenario, contender, answer);
    const [field] = Object.keys(expectedBody.data);
    const expectedRows = expectedBody.data[field];
    rows += Array.isArray(expectedRows) ? expectedRows.length : 1;
    if (contender === "mdq-duckdb") continue;
    if (contender === "postgraphile") {
      if (answer.status !== 200) throw new Disagreement(scenario, contender, `HTTP ${answer.status}`);
      const page = JSON.parse(answer.text).data?.benchRecordsPage;
      if (!page) throw new Disagreement(scenario, contender, answer.text.slice(0, 300));
      const ids = page.nodes.map((node) => node.recordId).join(",");
      if (ids !== expectedRows.map((row) => row.recordId).join(","))
        throw new Disagreement(scenario, contender, "different record ids or order");
      const total = expectedBody.extensions.pageInfo[field].totalCount;
      if (page.totalCount !== total)
        throw new Disagreement(scenario, contender, `totalCount ${page.totalCount}, MDQ ${total}`);
      continue;
    }
    if (contender.startsWith("mdq-postgres")) {
      // Another store: the same data; page info may word its data version differently.
      const [a, b] = [JSON.stringify(body.data), JSON.stringify(expectedBody.data)];
      if (field !== "marketingDataReadiness" && a !== b)
        throw new Disagreement(scenario, contender, firstDifference(a, b));
      continue;
    }
    if (answer.text !== expected.text)
      throw new Disagreement(scenario, contender, firstDifference(answer.text, expected.text));
  }
  if (contender === "postgraphile") return `same record ids, order and totalCount (${rows} rows)`;
  if (contender.startsWith("mdq-postgres")) return `same data (${rows} rows or answers)`;
  if (contender === "mdq-duckdb") return `reference (${rows} rows or answers)`;
  return `same bytes (${rows} rows or answers)`;
}
