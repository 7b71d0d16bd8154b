// The MDQ explorer: GraphiQL (UMD globals React, ReactDOM, GraphiQL) over POST /graphql, the
// address of this very page, with the token of the form above it as `Authorization: Bearer …`.
// Loaded as a module file, never inline, so the page's Content-Security-Policy can forbid inline
// scripts; modules run after the deferred UMD scripts before them, in order.
const settings = JSON.parse(document.getElementById("mdq-explorer-settings").textContent);
const form = document.getElementById("mdq-token-form");
const tokenInput = document.getElementById("mdq-token");
const endpoint = window.location.pathname;

// Without a token every query would be a 401 (introspection too): answer locally instead, so the
// page opens quietly and says what to do.
const NO_TOKEN = {
  errors: [{ message: "Paste a bearer token above (the access_token of POST /oauth2/token), then run." }],
};

/** A fetcher reading the token at each request; a new one makes GraphiQL load the schema again. */
function makeFetcher() {
  return async (params, options) => {
    const headers = { "content-type": "application/json", accept: "application/json", ...options?.headers };
    const hasAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
    const token = tokenInput.value.trim();
    if (!hasAuthorization) {
      if (token === "") return NO_TOKEN;
      headers.authorization = `Bearer ${token}`;
    }
    const response = await fetch(endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify(params),
      credentials: "omit",
    });
    return response.json();
  };
}

function Explorer() {
  const [fetcher, setFetcher] = React.useState(makeFetcher);
  React.useEffect(() => {
    const renew = (event) => {
      event.preventDefault();
      setFetcher(() => makeFetcher());
    };
    form.addEventListener("submit", renew);
    tokenInput.addEventListener("change", renew);
    return () => {
      form.removeEventListener("submit", renew);
      tokenInput.removeEventListener("change", renew);
    };
  }, []);
  return React.createElement(
    GraphiQL,
    {
      fetcher,
      defaultTabs: settings.tabs,
      defaultEditorToolsVisibility: "variables",
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
    },
    React.createElement(GraphiQL.Logo, null, "MDQ"),
  );
}

ReactDOM.createRoot(document.getElementById("mdq-explorer")).render(React.createElement(Explorer));
