// The modal a bot opens with a type 9 callback: text inputs (and selects) in labels or rows.

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function field(component, label, description) {
  const wrap = el("label", "modal-field");
  wrap.append(el("span", "modal-label", label || component.label || component.custom_id));
  if (description) wrap.append(el("span", "modal-description", description));
  let input;
  if (component.type === 3) {
    input = el("select", "select");
    input.multiple = (component.max_values || 1) > 1;
    for (const option of component.options || []) {
      const item = el("option", null, option.label);
      item.value = option.value;
      input.append(item);
    }
  } else {
    input = el(component.style === 2 ? "textarea" : "input", "modal-input");
    if (component.style !== 2) input.type = "text";
    if (component.placeholder) input.placeholder = component.placeholder;
    if (component.value) input.value = component.value;
    if (component.max_length) input.maxLength = component.max_length;
    if (component.min_length) input.minLength = component.min_length;
  }
  input.required = component.required !== false;
  input.dataset.customId = component.custom_id;
  wrap.append(input);
  return wrap;
}

function values(form) {
  const out = {};
  for (const input of form.querySelectorAll("[data-custom-id]")) {
    out[input.dataset.customId] =
      input.tagName === "SELECT" ? Array.from(input.selectedOptions, (o) => o.value) : input.value;
  }
  return out;
}

/**
 * Show `modal` in `dialog`; `submit(values)` resolves to an error sentence or null (done).
 */
export function openModal(dialog, modal, submit) {
  dialog.replaceChildren();
  const form = el("form", "modal");
  form.method = "dialog";
  form.append(el("h2", "modal-title", modal.title || "Form"));
  for (const top of modal.components || []) {
    if (top.type === 18 && top.component) {
      form.append(field(top.component, top.label, top.description));
    } else if (top.type === 1) {
      for (const inner of top.components || []) form.append(field(inner, inner.label));
    } else if (top.type === 10) {
      form.append(el("p", "modal-text", top.content));
    }
  }
  const error = el("div", "modal-error");
  error.setAttribute("role", "alert");
  const cancel = el("button", "btn btn-secondary", "Cancel");
  cancel.type = "button";
  cancel.addEventListener("click", () => dialog.close());
  const send = el("button", "btn btn-primary", "Submit");
  send.type = "submit";
  const buttons = el("div", "modal-buttons");
  buttons.append(cancel, send);
  form.append(error, buttons);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    send.disabled = true;
    error.textContent = "";
    const problem = await submit(values(form));
    send.disabled = false;
    if (problem) error.textContent = problem;
    else dialog.close();
  });
  dialog.append(form);
  dialog.showModal();
  const first = form.querySelector("[data-custom-id]");
  if (first) first.focus();
}
