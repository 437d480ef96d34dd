// ---- restoring a view from the URL ----------------------------------------------------------

function restore() {
  const [view, ...rest] = location.hash.slice(1).split("/");
  if (!VIEWS.includes(view)) return show(current);
  restoring = true;
  try {
    show(view);
    if (view === "decode") {
      if (rest[0]) $("#decode-encoder").value = decodeURIComponent(rest[0]);
      if (rest[1] !== undefined) $("#decode-input").value = decodeURIComponent(rest.slice(1).join("/")).split(",").join("\n");
    } else if (view === "encode") {
      if (rest[0]) { $("#encode-encoder").value = decodeURIComponent(rest[0]); encodeForm(); }
      for (const [k, v] of Object.entries(parseQuery(rest[1]))) { const i = $(`#encode-form input[name="${CSS.escape(k)}"]`); if (i) i.value = v; }
    } else if (view === "rings") {
      if (rest[0]) $("#rings-input").value = decodeURIComponent(rest[0]);
    } else if (view === "dtypes") {
      if (rest[0]) $("#dtypes-dtype").value = decodeURIComponent(rest[0]);
      if (rest[1] !== undefined) $("#dtypes-value").value = decodeURIComponent(rest[1]);
      $("#dtypes-saturate").checked = rest[2] === "saturate";
    } else if (view === "element") {
      const q = parseQuery(rest.join("/"));
      const f = $("#element-form");
      for (const [k, v] of Object.entries(q)) if (f.elements[k]) f.elements[k].value = v;
    }
  } finally {
    restoring = false;
  }
  render(view);
}

function render(view) {
  ({ decode: renderDecode, encode: renderEncode, rings: () => renderRingBytes($("#rings-input").value), dtypes: renderDtype, element: renderElement })[view]();
}
