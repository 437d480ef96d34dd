// ---- restoring a view from the URL ----------------------------------------------------------
// Every link opens the page, however cut or mangled: a part that cannot be read (a bad escape,
// a view, decoder, encoder, dtype or key the page does not have) is left as the view had it,
// and a note above the view's own message says what was not read. An unknown view opens the
// decoder (or the view shown) with that note.

const LINK_NOTE_CHARS = 60;

function clip(s) {
  return s.length > LINK_NOTE_CHARS ? `${s.slice(0, LINK_NOTE_CHARS)}…` : s;
}

// Chooses `value` in the menu `sel`, or says that the menu lacks it.
function chooseOption(sel, value, what, problems) {
  const names = Array.from(sel.options, (o) => o.value);
  if (names.includes(value)) {
    sel.value = value;
    return true;
  }
  problems.push(`the link's ${what} '${clip(value)}' is not one the page has (${names.filter((n) => n !== "").join(", ")})`);
  return false;
}

const restoreView = {
  decode(rest, problems) {
    if (rest[0]) chooseOption($("#decode-encoder"), linkText(rest[0], problems), "decoder", problems);
    if (rest.length > 1) $("#decode-input").value = linkText(rest.slice(1).join("/"), problems).split(",").join("\n");
  },
  encode(rest, problems) {
    if (rest[0] && chooseOption($("#encode-encoder"), linkText(rest[0], problems), "encoder", problems)) encodeForm();
    const inputs = Array.from(document.querySelectorAll("#encode-form input"));
    for (const [k, v] of Object.entries(parseQuery(rest.slice(1).join("/"), problems))) {
      const input = inputs.find((i) => i.name === k);
      if (input) input.value = v;
      else problems.push(`the link's field '${clip(k)}' is not one of ${$("#encode-encoder").value}'s (${inputs.map((i) => i.name).join(", ")})`);
    }
  },
  rings(rest, problems) {
    if (rest.length) $("#rings-input").value = linkText(rest.join("/"), problems);
  },
  dtypes(rest, problems) {
    if (rest[0]) chooseOption($("#dtypes-dtype"), linkText(rest[0], problems), "dtype", problems);
    if (rest[1] !== undefined) $("#dtypes-value").value = linkText(rest[1], problems);
    $("#dtypes-saturate").checked = rest[2] === "saturate";
    if (rest.length > 3 || (rest[2] !== undefined && rest[2] !== "saturate")) {
      problems.push(`the link's '${clip(linkText(rest.slice(2).join("/"), []))}' after the value is not 'saturate'`);
    }
  },
  element(rest, problems) {
    const f = $("#element-form");
    const names = Array.from(f.elements, (e) => e.name).filter((n) => n);
    for (const [k, v] of Object.entries(parseQuery(rest.join("/"), problems))) {
      const field = names.includes(k) ? f.elements.namedItem(k) : null;
      if (!field) problems.push(`the link's '${clip(k)}' is not one of the element form's fields (${names.join(", ")})`);
      else if (field.tagName === "SELECT") chooseOption(field, v, `\`${k}\``, problems);
      else field.value = v;
    }
  },
};

// The link's notes, in their own paragraph above the view's message (which the view redraws);
// gone at the next change to the view.
function showLinkNotes(view, problems) {
  for (const old of document.querySelectorAll(".link-note")) old.remove();
  if (!problems.length) return;
  const note = el("p", { class: "error link-note", role: "alert", "data-view": view }, problems.flatMap((m, k) => (k ? [el("br"), m] : [m])));
  const section = $(`#view-${view}`);
  section.insertBefore(note, $(`#${view}-error`));
  const drop = () => { note.remove(); section.removeEventListener("input", drop); section.removeEventListener("change", drop); };
  section.addEventListener("input", drop);
  section.addEventListener("change", drop);
}

function restore() {
  const problems = [];
  const [head, ...rest] = location.hash.slice(1).split("/");
  let view = linkText(head, problems);
  if (!VIEWS.includes(view)) {
    if (view !== "" || rest.length) problems.push(`the link names no view '${clip(view)}' (the views: ${VIEWS.join(", ")})`);
    view = current;
    rest.length = 0;
  }
  restoring = true;
  try {
    show(view);
    restoreView[view](rest, problems);
  } catch (e) {
    problems.push(`the link could not be read whole: ${e}`);
  } finally {
    restoring = false;
  }
  try {
    render(view);
  } catch (e) {
    problems.push(`the view could not be drawn from the link: ${e}`);
  }
  showLinkNotes(view, problems);
}

function render(view) {
  ({ decode: renderDecode, encode: renderEncode, rings: () => renderRingBytes($("#rings-input").value), dtypes: renderDtype, element: renderElement })[view]();
}
