// The API reference on /docs: Redoc (assets/vendor/redoc, loaded before this script) draws
// the OpenAPI document that the page's container names, in the colours of the other pages.
// Search is off: it would run in a worker made from a blob, which the page's policy refuses.
"use strict";

const reference = document.getElementById("reference");
const system = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif";
window.Redoc.init(
  reference.dataset.spec,
  {
    disableSearch: true,
    expandResponses: "200",
    jsonSampleExpandLevel: 2,
    sortPropsAlphabetically: false,
    theme: {
      colors: { primary: { main: "#2563eb" } },
      typography: {
        fontFamily: system,
        headings: { fontFamily: system },
        code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace" },
      },
      sidebar: { backgroundColor: "#f4f5f7" },
    },
  },
  reference,
);
