// The owner's page: the emulated guild, live from /_emulator/feed, acted on through the
// control API as the person picked at the top. No build step: plain ES modules.

import { renderMessage, displayName, visibleTo } from "./render.js";
import { openModal } from "./modal.js";
import { refreshTimes } from "./markdown.js";

const $ = (selector) => document.querySelector(selector);
const EMOJIS = ["✅", "❌", "👍", "👎", "1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "🎉", "👀", "❤️"];
const ME_KEY = "discord-mcp-page-user";

const world = {
  guild: null,
  botId: null,
  ownerId: null,
  homeId: null,
  channels: new Map(),
  users: new Map(),
  messages: new Map(),
};
const dismissed = new Set();
const unread = new Set();
let me = null;
let current = null;
let replyTo = null;
let files = [];

function byId(a, b) {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const DM = 1;

function channelName(id) {
  const channel = world.channels.get(id);
  if (channel && channel.type === DM) return "direct messages";
  return channel ? channel.name : "unknown-channel";
}

/** The DM channels `user` is in (the bot's direct messages to them). */
function directChannels(user) {
  return [...world.channels.values()].filter(
    (c) => c.type === DM && (c.recipients || []).some((r) => r.id === user),
  );
}

function botName() {
  return displayName(world.users.get(world.botId)) || "the bot";
}

function userName(id) {
  return displayName(world.users.get(id)) || id;
}

function toast(text, kind = "info", action = null, key = "") {
  const note = document.createElement(action ? "button" : "div");
  note.dataset.key = key;
  note.className = "toast " + kind;
  note.textContent = text;
  if (action) {
    note.type = "button";
    note.addEventListener("click", () => {
      note.remove();
      action();
    });
  }
  $("#toasts").append(note);
  setTimeout(() => note.remove(), 8000);
}

// The emulator's control token, when it has one: embedded in this page's HTML (read only by
// same-origin scripts), sent with every control request.
const controlToken =
  document.querySelector('meta[name="emulator-control-token"]')?.getAttribute("content") || "";

function controlHeaders(method) {
  const headers = {};
  // The control API takes JSON only: another site cannot send it without a CORS preflight.
  if (method !== "GET") headers["content-type"] = "application/json";
  if (controlToken) headers.authorization = "Bearer " + controlToken;
  return headers;
}

async function call(method, path, body) {
  try {
    const response = await fetch("/_emulator" + path, {
      method,
      headers: controlHeaders(method),
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) return [false, data.error || `the emulator answered ${response.status}`];
    return [true, data];
  } catch (error) {
    return [false, "the emulator is not reachable: " + error.message];
  }
}

// -- what the view shows -------------------------------------------------------------------

const view = {
  get me() {
    return me;
  },
  userName,
  channelName,
  onInteract: interact,
  onReact: react,
  onPickEmoji: pickEmoji,
  onOpenThread: (id) => show(id),
  onReply: (msg) => setReply(msg),
  onDismiss: (msg) => {
    dismissed.add(msg.id);
    removeNode(msg.id);
  },
  onJump: (id) => {
    const node = document.querySelector(`#messages [data-id="${CSS.escape(id)}"]`);
    if (node) node.scrollIntoView({ block: "center" });
  },
};

function shown(msg) {
  return msg.channel_id === current && visibleTo(msg, me) && !dismissed.has(msg.id);
}

function nearBottom() {
  const list = $("#messages");
  return list.scrollHeight - list.scrollTop - list.clientHeight < 80;
}

function scrollDown() {
  const list = $("#messages");
  list.scrollTop = list.scrollHeight;
}

function removeNode(id) {
  const node = document.querySelector(`#messages [data-id="${CSS.escape(id)}"]`);
  if (node) node.remove();
}

function placeNode(msg) {
  const list = $("#messages");
  const fresh = renderMessage(msg, view);
  const old = list.querySelector(`[data-id="${CSS.escape(msg.id)}"]`);
  if (old) {
    old.replaceWith(fresh);
    return;
  }
  const after = Array.from(list.children).find((node) => byId(node.dataset.id, msg.id) > 0);
  list.insertBefore(fresh, after || null);
}

function renderMessages() {
  const list = $("#messages");
  list.replaceChildren();
  const mine = [...world.messages.values()].filter(shown).sort((a, b) => byId(a.id, b.id));
  for (const msg of mine) list.append(renderMessage(msg, view));
  if (!mine.length) {
    const empty = document.createElement("li");
    empty.className = "empty";
    empty.textContent = "No messages yet. Start the demo or your agent, and they appear here.";
    list.append(empty);
  }
  scrollDown();
}

function renderNav() {
  const nav = $("#channels");
  nav.replaceChildren();
  const home = world.channels.get(world.homeId);
  const threads = [...world.channels.values()]
    .filter((c) => c.parent_id === world.homeId && (c.type === 11 || c.type === 12))
    .sort((a, b) => byId(b.id, a.id));
  const entry = (channel, label, className) => {
    const item = document.createElement("button");
    item.type = "button";
    item.className = className + (channel.id === current ? " current" : "");
    item.dataset.channelId = channel.id;
    item.textContent = label;
    if (unread.has(channel.id)) item.classList.add("unread");
    if (channel.thread_metadata && channel.thread_metadata.archived) item.classList.add("archived");
    item.addEventListener("click", () => show(channel.id));
    nav.append(item);
  };
  if (home) entry(home, "# " + home.name, "nav-channel");
  for (const thread of threads) entry(thread, "🧵 " + thread.name, "nav-thread");
  // The guild's other text and announcement channels (a chat channel, issue 25).
  const others = [...world.channels.values()]
    .filter((c) => c.id !== world.homeId && (c.type === 0 || c.type === 5) && c.guild_id)
    .sort((a, b) => (a.position || 0) - (b.position || 0) || byId(a.id, b.id));
  for (const other of others) entry(other, "# " + other.name, "nav-channel nav-other");
  const direct = directChannels(me);
  if (direct.length) {
    const heading = document.createElement("div");
    heading.className = "nav-heading";
    heading.textContent = "Direct messages";
    nav.append(heading);
    for (const dm of direct) entry(dm, "✉️ " + botName(), "nav-dm");
  }
}

function renderHeader() {
  const channel = world.channels.get(current);
  const title = $("#channel-title");
  if (!channel) {
    title.textContent = "";
    return;
  }
  const isThread = channel.type === 11 || channel.type === 12;
  if (channel.type === DM) {
    title.textContent = "✉️ " + botName() + " · direct messages";
    $("#text").placeholder = `Message @${botName()} as ${userName(me)}`;
    return;
  }
  title.textContent = (isThread ? "🧵 " : "# ") + channel.name + (channel.topic ? " · " + channel.topic : "");
  $("#text").placeholder = `${isThread ? "Reply in the thread" : "Message #" + channel.name} as ${userName(me)}`;
  $("#guild-name").textContent = world.guild ? world.guild.name : "";
}

function renderPeople() {
  const picker = $("#who");
  picker.replaceChildren();
  const humans = [...world.users.values()].filter((u) => !u.bot);
  humans.sort((a, b) => (a.id === world.ownerId ? -1 : b.id === world.ownerId ? 1 : byId(a.id, b.id)));
  for (const user of humans) {
    const option = document.createElement("option");
    option.value = user.id;
    option.textContent = displayName(user) + (user.id === world.ownerId ? " (guild owner)" : "");
    picker.append(option);
  }
  picker.value = me;
}

function show(id) {
  if (!world.channels.has(id)) return;
  current = id;
  unread.delete(id);
  for (const note of document.querySelectorAll(`#toasts [data-key="${CSS.escape(id)}"]`)) note.remove();
  history.replaceState(null, "", "#" + id);
  setReply(null);
  renderNav();
  renderHeader();
  renderMessages();
}

function setMe(id) {
  me = id;
  localStorage.setItem(ME_KEY, id);
  document.body.dataset.me = id;
  renderPeople();
  const channel = world.channels.get(current);
  if (channel && channel.type === DM && !directChannels(me).includes(channel)) {
    show(world.homeId); // someone else's direct messages are not yours to read
    return;
  }
  renderNav();
  renderHeader();
  renderMessages();
}

// -- the live feed -------------------------------------------------------------------------

function onSnapshot(data) {
  world.guild = data.guild;
  world.botId = data.bot_user_id;
  world.ownerId = data.owner_user_id;
  world.homeId = data.channel_id;
  world.channels = new Map(data.channels.map((c) => [c.id, c]));
  world.users = new Map(data.users.map((u) => [u.id, u]));
  world.messages = new Map(data.messages.map((m) => [m.id, m]));
  const saved = localStorage.getItem(ME_KEY);
  if (!me) me = saved && world.users.has(saved) ? saved : world.ownerId;
  const [wanted, jumpTo] = location.hash.slice(1).split("/");
  document.body.dataset.me = me;
  renderPeople();
  show(world.channels.has(wanted) ? wanted : current && world.channels.has(current) ? current : world.homeId);
  if (jumpTo) view.onJump(jumpTo);
}

function onMessage(msg) {
  const known = world.messages.has(msg.id);
  world.messages.set(msg.id, msg);
  if (!world.users.has(msg.author.id)) {
    world.users.set(msg.author.id, msg.author);
    renderPeople();
  }
  if (shown(msg)) {
    const bottom = nearBottom();
    const empty = $("#messages .empty");
    if (empty) empty.remove();
    placeNode(msg);
    if (bottom || msg.author.id === me) scrollDown();
  } else if (!known && msg.channel_id !== current && visibleTo(msg, me)) {
    unread.add(msg.channel_id);
    renderNav();
  }
}

function onDelete(data) {
  world.messages.delete(data.id);
  removeNode(data.id);
}

function onChannel(channel) {
  const known = world.channels.has(channel.id);
  world.channels.set(channel.id, channel);
  if (!known && channel.type === DM) {
    if (directChannels(me).includes(channel)) {
      unread.add(channel.id);
      toast(`✉️ ${botName()} sent you a direct message (open it)`, "info", () => show(channel.id), channel.id);
    }
  } else if (!known && (channel.type === 0 || channel.type === 5)) {
    unread.add(channel.id);
    toast(`# New channel: ${channel.name} (open it)`, "info", () => show(channel.id), channel.id);
  } else if (!known) {
    unread.add(channel.id);
    toast(`🧵 New thread: ${channel.name} (open it)`, "info", () => show(channel.id), channel.id);
  }
  renderNav();
  if (channel.id === current) renderHeader();
}

function connect() {
  // EventSource cannot set headers: the token goes in the query (same-origin, no referrer).
  const query = controlToken ? "?token=" + encodeURIComponent(controlToken) : "";
  const feed = new EventSource("/_emulator/feed" + query);
  const live = $("#live");
  const parse = (handler) => (event) => handler(JSON.parse(event.data));
  feed.addEventListener("snapshot", parse(onSnapshot));
  feed.addEventListener("message", parse(onMessage));
  feed.addEventListener("message_delete", parse(onDelete));
  feed.addEventListener("channel", parse(onChannel));
  feed.addEventListener("open", () => {
    live.textContent = "live";
    live.className = "live on";
  });
  feed.addEventListener("error", () => {
    live.textContent = "reconnecting…";
    live.className = "live off";
  });
}

// -- acting as a person --------------------------------------------------------------------

async function interact(msg, component, values, control) {
  control.disabled = true;
  const body = { user_id: me, message_id: msg.id, custom_id: component.custom_id };
  if (values) body.values = values;
  const [ok, report] = await call("POST", "/interactions", body);
  control.disabled = Boolean(component.disabled);
  if (!ok) {
    toast(report, "error");
    return;
  }
  answered(msg, component, report);
}

function answered(msg, component, report) {
  if (report.modal) {
    openModal($("#modal"), report.modal, async (values) => {
      const body = {
        user_id: me,
        message_id: msg.id,
        custom_id: component.custom_id,
        modal: { custom_id: report.modal.custom_id, values },
      };
      const [ok, next] = await call("POST", "/interactions", body);
      if (!ok) return next;
      answered(msg, component, next);
      return null;
    });
  } else if (!report.acknowledged) {
    toast(
      report.delivered === 0
        ? "This interaction failed: no app is connected to the gateway to answer it."
        : "This interaction failed: the app did not answer within 3 seconds.",
      "error",
    );
  }
}

async function react(msg, emoji, remove) {
  const body = { user_id: me, channel_id: msg.channel_id, message_id: msg.id, emoji, remove };
  const [ok, answer] = await call("POST", "/reactions", body);
  if (!ok) toast(answer, "error");
}

function pickEmoji(msg, anchor) {
  const picker = $("#emoji-picker");
  picker.replaceChildren();
  for (const emoji of EMOJIS) {
    const choice = document.createElement("button");
    choice.type = "button";
    choice.textContent = emoji;
    choice.addEventListener("click", () => {
      picker.hidden = true;
      react(msg, emoji, false);
    });
    picker.append(choice);
  }
  const box = anchor.getBoundingClientRect();
  picker.style.top = `${Math.max(8, box.top - 56 + window.scrollY)}px`;
  picker.style.left = `${Math.min(box.left, window.innerWidth - 260)}px`;
  picker.hidden = false;
}

function setReply(msg) {
  replyTo = msg;
  const bar = $("#replying");
  bar.hidden = !msg;
  if (msg) {
    $("#replying-to").textContent = "Replying to " + displayName(msg.author);
    $("#text").focus();
  }
}

// -- files: offered only when the control API takes `attachments` with a message ----------

async function probeFiles() {
  // An unknown field is refused with the list of allowed ones, and nothing is posted.
  const [, answer] = await call("POST", `/channels/${world.homeId || 0}/messages`, { probe: 1 });
  $("#attach").hidden = !/'attachments'/.test(String(answer));
}

function base64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function showFiles() {
  const box = $("#files");
  box.replaceChildren();
  box.hidden = !files.length;
  for (const file of files) {
    const chip = document.createElement("button");
    chip.type = "button";
    chip.className = "file-chip";
    chip.textContent = `📎 ${file.name} ✕`;
    chip.title = "Remove this file";
    chip.addEventListener("click", () => {
      files = files.filter((f) => f !== file);
      showFiles();
    });
    box.append(chip);
  }
}

async function attachments() {
  return Promise.all(
    files.map(async (file) => ({
      filename: file.name,
      content_type: file.type || "application/octet-stream",
      data_base64: await base64(file),
    })),
  );
}

async function send(event) {
  event.preventDefault();
  const input = $("#text");
  const content = input.value;
  if ((!content.trim() && !files.length) || !current) return;
  const body = { author_id: me, content };
  if (replyTo) body.message_reference = { message_id: replyTo.id };
  if (files.length) body.attachments = await attachments();
  $("#send").disabled = true;
  const [ok, answer] = await call("POST", `/channels/${current}/messages`, body);
  $("#send").disabled = false;
  if (!ok) {
    toast(answer, "error");
    return;
  }
  input.value = "";
  files = [];
  showFiles();
  setReply(null);
}

async function addPerson() {
  const name = (prompt("Name of the new person (not an owner: their answers are refused)") || "").trim();
  if (!name) return;
  const [ok, user] = await call("POST", "/users", { username: name.slice(0, 32) });
  if (!ok) {
    toast(user, "error");
    return;
  }
  world.users.set(user.id, user);
  setMe(user.id);
}

async function refreshPeople() {
  const [ok, state] = await call("GET", "/state");
  if (!ok) return;
  for (const user of state.users) world.users.set(user.id, user);
  renderPeople();
}

function start() {
  $("#composer").addEventListener("submit", send);
  $("#text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) send(event);
  });
  $("#who").addEventListener("change", (event) => setMe(event.target.value));
  $("#who").addEventListener("focus", refreshPeople);
  $("#new-user").addEventListener("click", addPerson);
  $("#cancel-reply").addEventListener("click", () => setReply(null));
  $("#attach").addEventListener("click", () => $("#file").click());
  $("#file").addEventListener("change", (event) => {
    files = [...files, ...event.target.files];
    event.target.value = "";
    showFiles();
  });
  probeFiles();
  // Relative timestamps ("5 minutes ago") move on, as in Discord.
  setInterval(() => refreshTimes($("#messages")), 15000);
  document.addEventListener("click", (event) => {
    const picker = $("#emoji-picker");
    if (!picker.hidden && !picker.contains(event.target) && !event.target.closest(".reaction.add")) {
      picker.hidden = true;
    }
  });
  connect();
}

start();
