// One message as Discord shows it: author, content, embeds, attachments, components,
// reactions, "(edited)", and the "only you can see this" footer of an ephemeral reply.
// Every string from Discord goes into textContent or through markdown.js, never into HTML.

import { link, renderMarkdown, safeUrl } from "./markdown.js";

const FLAG_EPHEMERAL = 1 << 6;
const FLAG_LOADING = 1 << 7;
const THREAD_CREATED = 18;
const BUTTON_STYLES = { 1: "primary", 2: "secondary", 3: "success", 4: "danger", 5: "link", 6: "premium" };

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function displayName(user) {
  return (user && (user.global_name || user.username)) || "unknown";
}

function clock(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? ""
    : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** Whether `view.me` may see `msg` (ephemeral replies are only for their user). */
export function visibleTo(msg, me) {
  return !(msg.flags & FLAG_EPHEMERAL) || msg.visible_to === me;
}

function header(msg, view) {
  const head = el("div", "msg-head");
  const name = el("span", "msg-author", displayName(msg.author));
  if (msg.author.id === view.me) name.classList.add("is-me");
  head.append(name);
  if (msg.author.bot) head.append(el("span", "tag", "APP"));
  const time = el("time", "msg-time", clock(msg.timestamp));
  time.dateTime = msg.timestamp || "";
  head.append(time);
  return head;
}

function reference(msg, view) {
  const ref = el("div", "msg-ref");
  const target = msg.referenced_message;
  if (!target) {
    ref.textContent = "↪ Original message was deleted";
    return ref;
  }
  ref.append(el("span", "msg-ref-author", "↪ @" + displayName(target.author)));
  const snippet = (target.content || "").replace(/\s+/g, " ").slice(0, 80);
  ref.append(el("span", "msg-ref-text", " " + (snippet || "(no text)")));
  ref.addEventListener("click", () => view.onJump(target.id));
  return ref;
}

function embed(data, view) {
  const box = el("div", "embed");
  if (Number.isInteger(data.color)) {
    box.style.borderLeftColor = "#" + data.color.toString(16).padStart(6, "0");
  }
  if (data.author && data.author.name) box.append(el("div", "embed-author", data.author.name));
  if (data.title) {
    const href = data.url ? safeUrl(data.url) : null;
    const title = el("div", "embed-title");
    title.append(href ? link(href, data.title) : document.createTextNode(data.title));
    box.append(title);
  }
  if (data.description) {
    const text = el("div", "embed-description");
    text.append(renderMarkdown(String(data.description), view));
    box.append(text);
  }
  if (Array.isArray(data.fields) && data.fields.length) {
    const fields = el("div", "embed-fields");
    for (const field of data.fields) {
      const cell = el("div", field.inline ? "embed-field inline" : "embed-field");
      cell.append(el("div", "embed-field-name", field.name));
      const value = el("div", "embed-field-value");
      value.append(renderMarkdown(String(field.value || ""), view));
      cell.append(value);
      fields.append(cell);
    }
    box.append(fields);
  }
  const image = data.image && safeUrl(data.image.url || "");
  if (image) {
    const img = el("img", "embed-image");
    img.src = image;
    img.alt = "";
    box.append(img);
  }
  if (data.footer && data.footer.text) box.append(el("div", "embed-footer", data.footer.text));
  return box;
}

function attachment(item) {
  const box = el("div", "attachment");
  const href = safeUrl(new URL(item.url || item.proxy_url || "", location.href).href);
  const type = String(item.content_type || "");
  if (href && type.startsWith("image/")) {
    const img = el("img", "attachment-image");
    img.src = href;
    img.alt = item.filename || "";
    box.append(img);
  }
  const label = `${item.filename || "file"} (${Math.ceil((item.size || 0) / 1024)} KB)`;
  box.append(href ? link(href, "📎 " + label) : el("span", null, "📎 " + label));
  return box;
}

function button(component, msg, view) {
  const style = BUTTON_STYLES[component.style] || "secondary";
  const label = [component.emoji && component.emoji.name, component.label].filter(Boolean).join(" ");
  if (style === "link") {
    const href = safeUrl(component.url || "");
    const a = href ? link(href, label + " ↗") : el("span", null, label);
    a.classList.add("btn", "btn-link");
    return a;
  }
  const node = el("button", "btn btn-" + style, label || "…");
  node.type = "button";
  node.disabled = Boolean(component.disabled) || style === "premium";
  node.dataset.customId = component.custom_id || "";
  node.addEventListener("click", () => view.onInteract(msg, component, null, node));
  return node;
}

function select(component, msg, view) {
  const wrap = el("div", "select-wrap");
  const node = el("select", "select");
  node.dataset.customId = component.custom_id || "";
  node.disabled = Boolean(component.disabled);
  const many = (component.max_values || 1) > 1;
  node.multiple = many;
  if (!many) {
    const placeholder = el("option", null, component.placeholder || "Make a selection");
    placeholder.value = "";
    placeholder.disabled = true;
    placeholder.selected = true;
    node.append(placeholder);
  }
  for (const option of component.options || []) {
    const text = [option.emoji && option.emoji.name, option.label].filter(Boolean).join(" ");
    const item = el("option", null, text);
    item.value = option.value;
    if (option.description) item.title = option.description;
    node.append(item);
  }
  const values = () => Array.from(node.selectedOptions, (o) => o.value).filter((v) => v !== "");
  wrap.append(node);
  if (many) {
    const done = el("button", "btn btn-primary", "Choose");
    done.type = "button";
    done.addEventListener("click", () => view.onInteract(msg, component, values(), node));
    wrap.append(done);
  } else {
    node.addEventListener("change", () => view.onInteract(msg, component, values(), node));
  }
  return wrap;
}

/** Components: action rows, buttons, selects, and the display components of layout v2. */
function components(list, msg, view) {
  const out = document.createDocumentFragment();
  for (const component of list || []) {
    switch (component.type) {
      case 1: {
        const row = el("div", "component-row");
        row.append(components(component.components, msg, view));
        out.append(row);
        break;
      }
      case 2:
        out.append(button(component, msg, view));
        break;
      case 3:
        out.append(select(component, msg, view));
        break;
      case 9: {
        const section = el("div", "component-section");
        section.append(components(component.components, msg, view));
        if (component.accessory) section.append(components([component.accessory], msg, view));
        out.append(section);
        break;
      }
      case 10: {
        const text = el("div", "component-text");
        text.append(renderMarkdown(String(component.content || ""), view));
        out.append(text);
        break;
      }
      case 14:
        out.append(el("hr", "component-separator"));
        break;
      case 17: {
        const box = el("div", "embed component-container");
        box.append(components(component.components, msg, view));
        out.append(box);
        break;
      }
      default:
        out.append(el("div", "component-unknown", `[component of type ${component.type}]`));
    }
  }
  return out;
}

function reactions(msg, view) {
  const bar = el("div", "reactions");
  for (const reaction of msg.reactions || []) {
    const emoji = reaction.emoji.id ? `${reaction.emoji.name}:${reaction.emoji.id}` : reaction.emoji.name;
    const mine = (reaction.user_ids || []).includes(view.me);
    const chip = el("button", mine ? "reaction mine" : "reaction");
    chip.type = "button";
    chip.dataset.emoji = emoji;
    chip.title = mine ? "Remove your reaction" : "React with " + reaction.emoji.name;
    chip.append(el("span", "reaction-emoji", reaction.emoji.name));
    chip.append(el("span", "reaction-count", reaction.count));
    chip.addEventListener("click", () => view.onReact(msg, emoji, mine));
    bar.append(chip);
  }
  const add = el("button", "reaction add", "☺+");
  add.type = "button";
  add.title = "Add a reaction";
  add.addEventListener("click", (event) => view.onPickEmoji(msg, event.currentTarget));
  bar.append(add);
  return bar;
}

function threadNotice(msg, view) {
  const item = el("li", "msg system");
  item.dataset.id = msg.id;
  const threadId = msg.message_reference && msg.message_reference.channel_id;
  item.append(el("span", "system-icon", "🧵"));
  item.append(el("span", null, `${displayName(msg.author)} started a thread: `));
  const open = el("button", "thread-link", msg.content || view.channelName(threadId));
  open.type = "button";
  open.addEventListener("click", () => view.onOpenThread(threadId));
  item.append(open);
  item.append(el("time", "msg-time", clock(msg.timestamp)));
  return item;
}

/** The list item for one message, wired to `view`'s actions. */
export function renderMessage(msg, view) {
  if (msg.type === THREAD_CREATED) return threadNotice(msg, view);
  const item = el("li", "msg");
  item.dataset.id = msg.id;
  item.dataset.author = msg.author.id;
  if (msg.flags & FLAG_EPHEMERAL) item.classList.add("ephemeral");
  if ((msg.mentions || []).some((user) => user.id === view.me)) item.classList.add("mentions-me");
  if (msg.message_reference && msg.type === 19) item.append(reference(msg, view));
  item.append(header(msg, view));
  const body = el("div", "msg-body");
  if (msg.flags & FLAG_LOADING) {
    body.append(el("div", "msg-loading", `${displayName(msg.author)} is thinking…`));
  } else if (msg.content) {
    const content = el("div", "msg-content");
    content.append(renderMarkdown(msg.content, view));
    if (msg.edited_timestamp) content.append(el("span", "edited", " (edited)"));
    body.append(content);
  }
  for (const data of msg.embeds || []) body.append(embed(data, view));
  for (const item2 of msg.attachments || []) body.append(attachment(item2));
  if (msg.components && msg.components.length) {
    const box = el("div", "components");
    box.append(components(msg.components, msg, view));
    body.append(box);
  }
  if (msg.thread) {
    const open = el("button", "thread-link", "🧵 " + (msg.thread.name || "thread"));
    open.type = "button";
    open.addEventListener("click", () => view.onOpenThread(msg.thread.id));
    body.append(open);
  }
  item.append(body);
  if (msg.flags & FLAG_EPHEMERAL) {
    const foot = el("div", "ephemeral-note", "👁 Only you can see this · ");
    const dismiss = el("button", "linkish", "Dismiss message");
    dismiss.type = "button";
    dismiss.addEventListener("click", () => view.onDismiss(msg));
    foot.append(dismiss);
    item.append(foot);
  } else {
    item.append(reactions(msg, view));
    const actions = el("div", "msg-actions");
    const reply = el("button", "linkish", "Reply");
    reply.type = "button";
    reply.addEventListener("click", () => view.onReply(msg));
    actions.append(reply);
    item.append(actions);
  }
  return item;
}
