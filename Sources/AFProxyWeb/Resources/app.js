// afproxy's dashboard: the tasks and totals from GET /v1/live (one JSON snapshot a line, read with
// fetch and a stream reader: the live tasks that changed, the ids of all live ones, the tasks that
// completed, the totals), so what the page costs the daemon follows the tasks that moved, not the
// request rate. The page itself carries the first such line, so its list is drawn before any
// request. The history comes from GET /v1/tasks?all=1 once, when it is turned on; the network
// from GET /v1/status now and then. Every change is collected and drawn once per animation frame,
// touching only what changed; a long first list is drawn a screenful first, the rest in later
// frames. A click on a row opens the task's page (#task/ID in the address): its headers, phases,
// recorded bodies (read from GET /v1/tasks/{id}/body when the task completed, viewed by type),
// the request as a curl command line, a replay button, and for a request a hold rule stopped, a
// form that changes it, sends it or answers it (PATCH …/request, …/resume, …/respond). The access
// token is in an HttpOnly cookie this script never sees; every request here is same-origin, so
// the cookie and the Origin header go with it.
"use strict";

const $ = (id) => document.getElementById(id);
const tasks = new Map();      // id -> task record
const rows = new Map();       // id -> <tr>
const speeds = new Map();     // id -> {t, bytes, rate}
const removals = new Map();   // id -> timer: a completed task leaves the live list after a moment
const pending = new Set();
let frame = 0;
let selected = null;
let history = false;
let generation = 0;           // bumps when the list is reloaded, so stale loads are dropped
let live = new Set();         // ids of the live tasks, as the last snapshot has them
const leaving = new Set();    // ids gone from `live` whose final record has not come yet
let newcomers = new Map();    // id -> record: running in the last line only, not drawn yet
let drawn = false;            // the first list was drawn (data-first-render set)
let awaited = null;           // ids live in the first line and not drawn yet (for data-whole-list)
const samples = [];           // {t, up, down} from the snapshots' totals, one a second, the last minute
const filters = { state: "", kind: "", text: "" };

// ---------- formatting ----------

function bytes(n) {
  if (n == null) return "?";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

function duration(seconds) {
  if (seconds == null || !isFinite(seconds)) return "";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

function ms(value) {
  return value < 10 ? `${value.toFixed(2)} ms` : value < 1000 ? `${value.toFixed(1)} ms` : `${(value / 1000).toFixed(2)} s`;
}

// One meaning of failed, as in the daemon's stats (TaskRecord.isFailure): an error that is not a
// cancellation by a person, the client or a stopping daemon.
const CANCELLATIONS = new Set(["canceled", "client-closed", "daemon-stopping"]);
function failed(r) {
  return r.state === "completed" && (r.error != null || r.errorCode != null) && !CANCELLATIONS.has(r.errorCode);
}

// Credentials are not shown on a page anyone behind the screen can read (afproxyctl har
// --include-secrets has them): their values are `<redacted>` in the headers and in the curl
// command line.
const SECRETS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie"]);

/// The transfer a person watches: an upload's request body until it is sent, else the response.
function progressOf(r) {
  if (r.kind === "upload" && r.upload && (r.upload.total == null || r.upload.completed < r.upload.total)) return r.upload;
  return r.download || { completed: 0, total: null };
}

// ---------- the API ----------

async function api(method, path, body) {
  const init = { method, cache: "no-store", credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  if (response.status === 401) locked();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (_) { json = null; }
  if (!response.ok) throw new Error((json && json.error) || text.trim() || `${response.status}`);
  return json;
}

function locked() {
  document.body.classList.add("locked");
  setPill("connection", "locked", "no access");
  say("The token is missing or no longer valid (the daemon restarted?): open the address `afproxyctl web` prints.", true);
}

function say(text, isError) {
  const box = $("message");
  box.textContent = text;
  box.className = isError ? "error" : "muted";
}

function setPill(id, state, text) {
  const pill = $(id);
  pill.dataset.state = state;
  pill.textContent = text;
}

// ---------- the task list ----------

function store(record) {
  const old = tasks.get(record.id);
  // A list fetched while a task ended may still have it running: its final record stays. So does
  // one edited since (edits only grow): a feed line made before an edit here came back after it.
  if (old && old.state === "completed" && record.state !== "completed") return;
  if (old && (old.edits || []).length > (record.edits || []).length) return;
  const progress = progressOf(record);
  const now = performance.now();
  const speed = speeds.get(record.id);
  if (!speed || !old) {
    speeds.set(record.id, { t: now, bytes: progress.completed, rate: 0 });
  } else if (now - speed.t >= 200 || record.state !== "running") {
    const instant = Math.max(0, (progress.completed - speed.bytes) / ((now - speed.t) / 1000));
    const rate = record.state === "running" ? (speed.rate ? speed.rate * 0.6 + instant * 0.4 : instant) : 0;
    speeds.set(record.id, { t: now, bytes: progress.completed, rate });
  }
  tasks.set(record.id, record);
  touch(record.id);
  if (record.state === "completed" && !history && !removals.has(record.id)) {
    removals.set(record.id, setTimeout(() => {
      removals.delete(record.id);
      if (!history) { tasks.delete(record.id); speeds.delete(record.id); touch(record.id); }
    }, 5000));
  }
}

/// The history, once when it is turned on (and after a break in the feed while it is on): later
/// completions come with the snapshots.
async function loadHistory() {
  const mine = ++generation;
  const list = await api("GET", "/v1/tasks?all=1");
  if (mine !== generation || !history) return;
  for (const record of list.tasks) {
    if (record.state === "completed" || live.has(record.id)) store(record);
  }
}

/// Marks the first list drawn and laid out, in the frame that drew it: from navigation start (the
/// page's own clock), and from the list's arrival.
function markFirstRender(received) {
  drawn = true;
  void document.body.offsetHeight; // lay the rows out, so the time includes it
  const now = performance.now();
  document.body.dataset.renderMs = String(Math.round(now - received));
  document.body.dataset.firstRender = String(Math.round(now));
}

function touch(id) {
  pending.add(id);
  if (!frame) frame = requestAnimationFrame(flush);
}

function makeRow(record) {
  const tr = $("row-template").content.firstElementChild.cloneNode(true);
  tr.dataset.id = String(record.id);
  tr.cache = {};
  const cells = tr.children;
  const progress = cells[6].children;
  tr.cells_ = {
    id: cells[0], kind: cells[1], badge: cells[2].firstElementChild, method: cells[3], url: cells[4], status: cells[5],
    bar: progress[0], fill: progress[0].firstElementChild, bytes: progress[1], rate: progress[2], eta: progress[3],
    age: cells[7],
  };
  tr.cells_.id.textContent = String(record.id);
  return tr;
}

function set(tr, key, value, apply) {
  if (tr.cache[key] === value) return;
  tr.cache[key] = value;
  apply(value);
}

function paint(tr, r, nowMs) {
  const c = tr.cells_;
  set(tr, "state", r.state, (v) => { tr.dataset.state = v; });
  set(tr, "failed", failed(r) ? "1" : "0", (v) => { tr.dataset.failed = v; });
  set(tr, "kind", r.kind, (v) => { c.kind.textContent = v; tr.dataset.kind = v; });
  const ended = r.state === "completed" && (r.error != null || r.errorCode != null);
  const label = ended ? (r.errorCode || "failed") : r.waiting ? `${r.state}, waiting` : r.state;
  set(tr, "badge", label, (v) => { c.badge.textContent = v; c.badge.title = r.waiting || r.error || ""; });
  set(tr, "method", r.method || "", (v) => { c.method.textContent = v; });
  set(tr, "url", r.url || "", (v) => { c.url.textContent = v; c.url.title = v; });
  set(tr, "status", r.status == null ? "" : String(r.status), (v) => { c.status.textContent = v; });
  const p = progressOf(r);
  const total = p.total;
  const fraction = total ? Math.min(1, p.completed / total) : r.state === "completed" && !ended ? 1 : null;
  set(tr, "fraction", fraction, (v) => {
    c.bar.classList.toggle("indeterminate", v == null);
    c.fill.style.width = v == null ? "" : `${(v * 100).toFixed(1)}%`;
  });
  set(tr, "bytes", `${p.completed}/${total}`, () => {
    tr.dataset.bytes = String(p.completed);
    c.bytes.textContent = total != null ? `${bytes(p.completed)} / ${bytes(total)}` : bytes(p.completed);
  });
  const speed = speeds.get(r.id);
  const rate = r.state === "running" && speed ? speed.rate : 0;
  set(tr, "rate", rate > 0 ? `${bytes(Math.round(rate))}/s` : "", (v) => { c.rate.textContent = v; });
  const eta = rate > 0 && total != null ? (total - p.completed) / rate : null;
  set(tr, "eta", eta == null ? "" : `ETA ${duration(eta)}`, (v) => { c.eta.textContent = v; });
  const age = duration((nowMs - Date.parse(r.createdAt)) / 1000);
  set(tr, "age", age, (v) => { c.age.textContent = v; });
  set(tr, "hidden", !matches(r), (v) => { tr.hidden = v; });
}

function matches(r) {
  if (filters.state === "failed") { if (!failed(r)) return false; }
  else if (filters.state && r.state !== filters.state) return false;
  if (filters.kind && r.kind !== filters.kind) return false;
  if (filters.text) {
    const hay = `${r.id} ${r.method} ${r.url} ${r.status ?? ""} ${r.kind} ${r.state} ${r.errorCode ?? ""}`.toLowerCase();
    if (!hay.includes(filters.text)) return false;
  }
  return true;
}

/// A thousand new rows are drawn over a few frames, a screenful first, so the page shows the top
/// of the list at once and stays responsive: at least a screenful (rows are 30 px high, below about
/// 200 px of header, totals and toolbar) in a frame, and more while the frame has time left, except
/// in the first frame, which nothing should hold back.
const ROWS_FIRST = Math.max(10, Math.ceil((window.innerHeight - 200) / 30) + 1);
const FRAME_BUDGET_MS = 8;
let firstListAt = 0;          // when the first snapshot arrived, for data-render-ms

function flush() {
  frame = 0;
  const body = $("task-rows");
  const now = Date.now();
  const begun = performance.now();
  const created = [];
  const deferred = [];
  let detailChanged = false;
  for (const id of pending) {
    const record = tasks.get(id);
    let tr = rows.get(id);
    if (id === selected) detailChanged = true;
    if (!record) {
      if (tr) { tr.remove(); rows.delete(id); }
      continue;
    }
    if (!tr) { deferred.push(id); continue; }
    paint(tr, record, now);
  }
  pending.clear();
  if (deferred.length) {
    deferred.sort((x, y) => x - y);
    let i = 0;
    for (; i < deferred.length; i++) {
      if (i >= ROWS_FIRST && (!drawn || performance.now() - begun > FRAME_BUDGET_MS)) break;
      const record = tasks.get(deferred[i]);
      const tr = makeRow(record);
      rows.set(record.id, tr);
      paint(tr, record, now);
      created.push(tr);
    }
    for (; i < deferred.length; i++) pending.add(deferred[i]);
    // After the first screenful, the rest waits until that frame is painted.
    if (pending.size) frame = drawn ? requestAnimationFrame(flush) : requestAnimationFrame(() => setTimeout(flush, 0));
  }
  if (created.length) insertRows(body, created);
  if (detailChanged && selected != null) renderDetail();
  counts();
  if (!drawn && firstListAt) markFirstRender(firstListAt);
  if (drawn && !pending.size && awaited) {
    for (const id of awaited) if (rows.has(id) || !live.has(id)) awaited.delete(id);
    if (!awaited.size) {
      awaited = null;
      void document.body.offsetHeight;
      document.body.dataset.wholeList = String(Math.round(performance.now()));
    }
  }
}

/// Ids grow, so new rows almost always go at the end, in one fragment.
function insertRows(body, created) {
  created.sort((a, b) => Number(a.dataset.id) - Number(b.dataset.id));
  const last = body.lastElementChild;
  if (!last || Number(last.dataset.id) < Number(created[0].dataset.id)) {
    const fragment = document.createDocumentFragment();
    for (const tr of created) fragment.appendChild(tr);
    body.appendChild(fragment);
    return;
  }
  for (const tr of created) {
    const id = Number(tr.dataset.id);
    let before = null;
    for (let node = body.lastElementChild; node && Number(node.dataset.id) > id; node = node.previousElementSibling) before = node;
    body.insertBefore(tr, before);
  }
}

function counts() {
  let shown = 0;
  for (const tr of rows.values()) if (!tr.hidden) shown++;
  $("shown").textContent = rows.size ? `${shown} of ${rows.size} shown` : "";
  const filtered = filters.state || filters.kind || filters.text;
  $("cancel-all").textContent = filtered ? "Cancel shown" : "Cancel all";
  $("empty").hidden = rows.size > 0;
}

function refilter() {
  for (const [id, tr] of rows) {
    const v = !matches(tasks.get(id));
    tr.cache.hidden = v;
    tr.hidden = v;
  }
  counts();
}

function tickAges() {
  const now = Date.now();
  for (const [id, tr] of rows) {
    if (tr.hidden) continue;
    const r = tasks.get(id);
    if (!r) continue;
    set(tr, "age", duration((now - Date.parse(r.createdAt)) / 1000), (v) => { tr.cells_.age.textContent = v; });
    if (r.state !== "running") continue;
    // A task that stopped moving sends no progress: let its rate fall to zero.
    const speed = speeds.get(id);
    if (speed && performance.now() - speed.t > 1500 && speed.rate) { speed.rate = 0; touch(id); }
  }
}

// ---------- the live feed ----------

async function follow() {
  let first = true;
  for (;;) {
    try {
      const response = await fetch("/v1/live", { cache: "no-store", credentials: "same-origin" });
      if (response.status === 401) { locked(); return; }
      if (!response.ok || !response.body) throw new Error(`${response.status}`);
      setPill("connection", "live", "live");
      // After a break, completions were missed: the history is read again (the live list comes
      // whole in the first line anyway).
      if (!first && history) loadHistory().catch(() => {});
      first = false;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      // A line (the first holds every live task) comes in many chunks: they are kept apart and
      // joined once, and only the new chunk is searched for its end.
      let parts = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        let from = 0;
        let newline;
        while ((newline = text.indexOf("\n", from)) >= 0) {
          parts.push(text.slice(from, newline));
          const line = parts.join("");
          parts = [];
          from = newline + 1;
          if (line.trim()) handle(JSON.parse(line));
        }
        if (from < text.length) parts.push(text.slice(from));
      }
    } catch (_) {
      // The daemon went away or the stream broke: say so, and try again.
    }
    if (document.body.classList.contains("locked")) return;
    setPill("connection", "connecting", "reconnecting");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/// One snapshot: changed live tasks, the ids of all live ones, what completed, the totals. Lines
/// of other kinds are ignored.
function handle(line) {
  if (line.event !== "snapshot") return;
  const firstLine = !firstListAt;
  if (firstLine) {
    firstListAt = performance.now();
    awaited = new Set(line.live);
  }
  const before = live;
  live = new Set(line.live);
  // A task is drawn once it is live in two lines in a row (or in the first line). One that
  // starts and ends between two lines is counted in the totals and listed with the history, but
  // never drawn: at hundreds of requests a second its row would be made and dropped unseen, and
  // drawing them all cost the machine more than proxying them. A suspended or held task is drawn
  // at once: it waits for a person. (The page's own first line has every live id but only the
  // oldest tasks' records: the rest come with the feed's first line, and are drawn at once.)
  const seen = newcomers;
  newcomers = new Map();
  for (const record of line.tasks) {
    if (firstLine || before.has(record.id) || tasks.has(record.id) || record.state === "suspended") store(record);
    else newcomers.set(record.id, record);
  }
  for (const [id, record] of seen) if (live.has(id) && !tasks.has(id)) store(record);
  for (const record of line.completed) {
    // Without the history, only what was shown as live is shown completing; with it, every one.
    if (history || tasks.has(record.id)) store(record);
  }
  let unknownEnds = false;
  for (const id of leaving) if (live.has(id) || !tasks.has(id) || tasks.get(id).state === "completed") leaving.delete(id);
  for (const [id, record] of tasks) {
    if (live.has(id) || record.state === "completed") continue;
    // Gone from the live list: its final record may come in the next line (the task left the
    // registry as that line was made); if not, it ended beyond the newest completions, or
    // during a break.
    if (!leaving.has(id)) { leaving.add(id); continue; }
    leaving.delete(id);
    tasks.delete(id);
    speeds.delete(id);
    touch(id);
    unknownEnds = true;
    // The open page's task ended unseen (a replay's record came back after the line with its
    // end): its page would stay as it was last drawn, so its final record is read.
    if (id === selected) refreshSelected(id);
  }
  if (unknownEnds && history) loadHistory().catch(() => {});
  totals(line.stats);
  if (!drawn) {
    // The first list is drawn now rather than at the next frame (an empty one too).
    if (frame) cancelAnimationFrame(frame);
    flush();
  }
}

function showNetwork(network) {
  if (!network) return;
  const where = network.interface ? ` (${network.interface})` : "";
  setPill("network", network.status, `network ${network.status}${where}`);
}

// ---------- totals ----------

function totals(t) {
  $("version").textContent = `afproxy ${t.version}, up ${duration(t.uptimeSeconds)}`;
  $("total-live").textContent = String(t.live);
  const states = Object.entries(t.byState || {}).sort().map(([k, v]) => `${v} ${k}`);
  $("total-states").textContent = states.length ? states.join(", ") : "none";
  $("total-served").textContent = String(t.served);
  $("total-history").textContent = `${t.history} kept in history`;
  $("total-failed").textContent = String(t.failed);
  $("total-canceled").textContent = `${t.canceled || 0} canceled`;
  $("total-bytes").textContent = bytes(t.bytesUp + t.bytesDown);
  $("total-bytes-split").textContent = `↓ ${bytes(t.bytesDown)} ↑ ${bytes(t.bytesUp)}`;
  const now = performance.now();
  // One sample a second for the chart, though lines come more often.
  const last = samples[samples.length - 1];
  if (last && now - last.t < 950) return;
  samples.push({ t: now, up: t.bytesUp, down: t.bytesDown });
  while (samples.length > 2 && now - samples[0].t > 60000) samples.shift();
  const first = samples[0];
  const span = (now - first.t) / 1000;
  const down = span > 0 ? (t.bytesDown - first.down) / span : 0;
  const up = span > 0 ? (t.bytesUp - first.up) / span : 0;
  $("total-rate").textContent = `↓ ${bytes(Math.round(down))}/s ↑ ${bytes(Math.round(up))}/s`;
  $("total-rate").dataset.down = String(Math.round(down));
  chart();
}

/// The network's state is not in the snapshots: it is read now and then.
async function pollNetwork() {
  try {
    showNetwork((await api("GET", "/v1/status")).network);
  } catch (_) {
    // The feed says when the daemon is away.
  }
}

/// Bytes per second between consecutive samples, as bars, the last minute.
function chart() {
  const canvas = $("rate-chart");
  const context = canvas.getContext("2d");
  const width = canvas.width;
  const height = canvas.height;
  context.clearRect(0, 0, width, height);
  const rates = [];
  for (let i = 1; i < samples.length; i++) {
    const dt = (samples[i].t - samples[i - 1].t) / 1000;
    rates.push(dt > 0 ? (samples[i].down + samples[i].up - samples[i - 1].down - samples[i - 1].up) / dt : 0);
  }
  const top = Math.max(1, ...rates);
  const step = width / 60;
  context.fillStyle = "#1f6feb";
  rates.slice(-60).forEach((rate, i, all) => {
    const h = Math.max(rate > 0 ? 1 : 0, (rate / top) * (height - 2));
    context.fillRect(width - (all.length - i) * step, height - h, Math.max(1, step - 1), h);
  });
}

// ---------- the task page: facts, phases, headers ----------

async function select(id) {
  if (id !== selected) {
    const result = $("task-action-result");
    result.textContent = "";
    result.className = "muted";
    delete result.dataset.newId;
  }
  selected = id;
  for (const tr of rows.values()) tr.classList.toggle("selected", Number(tr.dataset.id) === id);
  $("detail").hidden = false;
  $("detail").parentElement.classList.add("with-task");
  if (!tasks.has(id)) {
    try { store(await api("GET", `/v1/tasks/${id}`)); } catch (e) { say(e.message, true); }
  }
  renderDetail();
}

async function refreshSelected(id) {
  try {
    const record = await api("GET", `/v1/tasks/${id}`);
    if (selected !== id) return;
    store(record);
    renderDetail();
  } catch (_) { /* gone from the history too: the page stays as last drawn */ }
}

function fillTable(table, pairs) {
  const body = table.tBodies[0];
  body.replaceChildren(...pairs.map(([a, b]) => {
    const tr = document.createElement("tr");
    const left = document.createElement("td");
    const right = document.createElement("td");
    left.textContent = a;
    right.textContent = b;
    tr.append(left, right);
    return tr;
  }));
}

function renderDetail() {
  const r = tasks.get(selected);
  if (!r) return;
  const panel = $("detail");
  panel.dataset.id = String(r.id);
  panel.dataset.state = r.state;
  panel.dataset.kind = r.kind;
  $("detail-title").textContent = `Task ${r.id} · ${r.kind} · ${failed(r) ? "failed" : CANCELLATIONS.has(r.errorCode) ? r.errorCode : r.state}`;
  $("detail-url").textContent = `${r.method} ${r.url}`;
  const m = r.metrics || {};
  const facts = [
    ["status", r.status == null ? "—" : String(r.status)],
    ["client", r.client || "—"],
    ["created", new Date(r.createdAt).toLocaleString()],
    ["received", `${bytes(r.download.completed)}${r.download.total != null ? ` of ${bytes(r.download.total)}` : ""}`],
    ["sent", `${bytes(r.upload.completed)}${r.upload.total != null ? ` of ${bytes(r.upload.total)}` : ""}`],
  ];
  if (m.remoteAddress) facts.push(["remote", m.remoteAddress]);
  // Two versions: an HTTP/2 client under interception is answered from an HTTP/1.1 origin.
  if (r.clientHTTPVersion) facts.push(["client HTTP", r.clientHTTPVersion]);
  if (m.httpVersion) facts.push(["origin HTTP", m.httpVersion]);
  if (m.reusedConnection != null) facts.push(["connection", m.reusedConnection ? "reused" : "new"]);
  if (r.waiting) facts.push(["waiting", r.waiting]);
  if (r.endReason) facts.push(["ended", r.endReason]);
  if (r.relay) facts.push(["relay", r.relay === "splice" ? "splice (in the kernel)" : r.relay]);
  if (r.file && r.file.path) facts.push(["file", r.file.path]);
  if (r.parent != null) facts.push(["connection task", taskLink(r.parent)]);
  if (r.requests != null) facts.push(["requests", String(r.requests)]);
  if (r.replayOf != null) facts.push(["replay of", taskLink(r.replayOf)]);
  if (r.heldBy != null) facts.push(["held by", `hold rule ${r.heldBy}`]);
  const p = r.clientProcess;
  if (p) {
    // As afproxyctl shows it: curl[1234], the user after it.
    const name = (p.executable || (p.commandLine || "").split(" ")[0] || "").split("/").pop();
    const label = name ? (p.pid != null ? `${name}[${p.pid}]` : name) : p.pid != null ? `[${p.pid}]` : "";
    facts.push(["process", [label, p.user ? `(${p.user})` : ""].filter(Boolean).join(" ") || "—"]);
    if (p.capture) facts.push(["capture", `${p.capture.name} (afproxyctl run #${p.capture.id})`]);
  }
  const list = $("detail-facts");
  list.replaceChildren(...facts.flatMap(([k, v]) => {
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = k;
    if (v instanceof Node) dd.append(v);
    else dd.textContent = v;
    return [dt, dd];
  }));
  const failure = $("detail-failure");
  failure.hidden = !(r.error || r.errorCode);
  failure.textContent = r.errorCode ? `${r.errorCode}: ${r.error || ""}` : r.error || "";
  drawWaterfall(r);
  const resumes = $("detail-resumes");
  resumes.replaceChildren(...(r.resumes || []).map((resume) => {
    const li = document.createElement("li");
    li.textContent = `at byte ${resume.offset.toLocaleString()} (${new Date(resume.at).toLocaleTimeString()})`;
    return li;
  }));
  if (!(r.resumes || []).length) {
    const li = document.createElement("li");
    li.className = "muted none";
    li.textContent = "none";
    resumes.append(li);
  }
  const pairs = (headers) => (headers || []).map((h) => [h.name, SECRETS.has(h.name.toLowerCase()) ? "<redacted>" : h.value]);
  fillTable($("request-headers"), pairs(r.requestHeaders));
  fillTable($("response-headers"), r.status == null ? [] : [["", `HTTP ${r.status}`], ...pairs(r.responseHeaders)]);
  const replay = $("task-replay");
  const replayable = r.state === "completed" && (r.kind === "data" || r.kind === "upload");
  replay.disabled = !replayable;
  replay.title = replayable ? "send this request again as a new task" : r.state !== "completed" ? "replay it once it completed" : `a ${r.kind} task is not replayed`;
  showEdit(r);
  showResponseEdit(r);
  showEdits(r);
  showBodies(r);
  showCurl(r);
}

function taskLink(id) {
  const a = document.createElement("a");
  a.href = `#task/${id}`;
  a.textContent = `task ${id}`;
  return a;
}

/// curl's marks are cumulative milliseconds from the start of the transfer: each phase runs from
/// the mark before it to its own, as browser developer tools draw them (and as the HAR export maps
/// them). A reused connection had no lookup, connect or handshake of its own.
function phases(r) {
  const m = r.metrics || {};
  const reused = m.reusedConnection === true;
  const live = r.state !== "completed";
  const endMs = m.totalMs != null && !live ? m.totalMs : (Date.now() - Date.parse(r.createdAt));
  const out = [];
  let cursor = 0;
  if (!reused) {
    if (m.dnsMs != null) { out.push(["dns", 0, m.dnsMs]); cursor = m.dnsMs; }
    if (m.connectMs != null) { out.push(["connect", cursor, Math.max(cursor, m.connectMs)]); cursor = Math.max(cursor, m.connectMs); }
    if (m.tlsMs != null && m.tlsMs > cursor) { out.push(["tls", cursor, m.tlsMs]); cursor = m.tlsMs; }
  }
  const end = Math.max(endMs || 0, m.ttfbMs || 0, cursor);
  if (m.ttfbMs != null) {
    out.push(["wait", cursor, Math.max(cursor, m.ttfbMs)]);
    out.push(["receive", Math.max(cursor, m.ttfbMs), end]);
  } else if (end > cursor) {
    out.push([r.waiting ? "blocked" : "wait", cursor, end]);
  }
  return { phases: out, end };
}

function drawWaterfall(r) {
  const { phases: list, end } = phases(r);
  const box = $("waterfall");
  const track = box.firstElementChild;
  track.replaceChildren(...list.map(([name, from, to]) => {
    const div = document.createElement("div");
    div.className = "phase";
    div.dataset.phase = name;
    div.dataset.ms = (to - from).toFixed(3);
    div.style.left = `${end > 0 ? (from / end) * 100 : 0}%`;
    div.style.width = `${end > 0 ? ((to - from) / end) * 100 : 0}%`;
    div.title = `${name} ${ms(to - from)}`;
    return div;
  }));
  box.dataset.drawn = list.length ? "1" : "0";
  box.dataset.total = end.toFixed(3);
  const legend = $("waterfall-legend").tBodies[0];
  legend.replaceChildren(...list.map(([name, from, to]) => {
    const tr = document.createElement("tr");
    const label = document.createElement("td");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.dataset.phase = name;
    label.append(swatch, name === "tls" ? "TLS" : name === "dns" ? "DNS" : name);
    const start = document.createElement("td");
    start.className = "muted";
    start.textContent = `from ${ms(from)}`;
    const length = document.createElement("td");
    length.textContent = ms(to - from);
    tr.append(label, start, length);
    return tr;
  }), totalRow(end, r.state !== "completed"));
}

function totalRow(end, live) {
  const tr = document.createElement("tr");
  const a = document.createElement("td");
  a.textContent = live ? "so far" : "total";
  const b = document.createElement("td");
  const c = document.createElement("td");
  c.textContent = ms(end);
  tr.append(a, b, c);
  return tr;
}

// ---------- the task page: bodies, curl, replay ----------

// A recorded body is read once its task completed and shown by its type: JSON pretty-printed and
// text up to TEXT_SHOWN characters, images as they are, the first HEX_SHOWN bytes of anything
// else as a hex dump. Gzip and deflate are decoded for viewing only (up to DECODED_MAX bytes);
// the download is the body as it was stored, as it passed.
const TEXT_SHOWN = 256 * 1024;
const PRETTY_MAX = 4 * 1024 * 1024;
const HEX_SHOWN = 64 * 1024;
const DECODED_MAX = 16 * 1024 * 1024;
const CURL_INLINE_MAX = 16 * 1024;
const IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
  "image/x-icon", "image/vnd.microsoft.icon", "image/svg+xml"]);
const TEXTS = new Set(["application/xml", "application/javascript", "application/ecmascript",
  "application/x-www-form-urlencoded", "application/x-ndjson", "application/yaml", "application/x-yaml",
  "application/toml", "application/graphql", "application/x-sh", "application/sql", "application/csv"]);
const EXTENSIONS = { "application/json": "json", "text/plain": "txt", "text/html": "html", "text/css": "css",
  "text/csv": "csv", "application/javascript": "js", "text/javascript": "js", "application/xml": "xml",
  "text/xml": "xml", "image/jpeg": "jpg", "image/svg+xml": "svg", "image/x-icon": "ico",
  "image/vnd.microsoft.icon": "ico", "application/pdf": "pdf", "application/zip": "zip",
  "application/x-www-form-urlencoded": "txt" };
const CODING_EXTENSIONS = { gzip: "gz", "x-gzip": "gz", deflate: "zz", br: "br", zstd: "zst" };
// The selected task's body views: what each side shows now (`keys`, so a redraw of the same
// record does nothing), the bytes read (the request's, for the curl command line) and the blob:
// addresses of its images, let go when another task is opened.
const bodies = { id: null, keys: {}, loaded: {}, urls: [] };

function headerValue(headers, name) {
  const found = (headers || []).find((h) => h.name.toLowerCase() === name);
  return found ? found.value : null;
}

function mediaType(type) {
  return (type || "").split(";")[0].trim().toLowerCase();
}

function isJSON(media) {
  return media === "application/json" || media === "text/json" || media.endsWith("+json");
}

function isText(media) {
  return media.startsWith("text/") || media.endsWith("+xml") || TEXTS.has(media);
}

/// `Content-Encoding` as a list, the first applied first; identity left out.
function codingsOf(headers) {
  return (headerValue(headers, "content-encoding") || "").split(",").map((c) => c.trim().toLowerCase()).filter((c) => c && c !== "identity");
}

function fileName(id, side, media, codings) {
  const ext = EXTENSIONS[media] || (isJSON(media) ? "json" : media.startsWith("image/") ? media.slice(6).replace(/[^a-z0-9]/g, "") : isText(media) ? "txt" : "bin");
  const coded = codings.map((c) => `.${CODING_EXTENSIONS[c] || "coded"}`).join("");
  return `task-${id}-${side}.${ext}${coded}`;
}

/// Text from bytes in the charset its type names (UTF-8 when it names none or one the browser
/// does not know).
function textOf(data, type) {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type || "");
  let decoder;
  try { decoder = new TextDecoder(m ? m[1] : "utf-8"); } catch (_) { decoder = new TextDecoder("utf-8"); }
  return decoder.decode(data);
}

/// A body without a type is text when its start is UTF-8 without control characters.
function looksLikeText(data) {
  if (!data.length) return true;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(data.subarray(0, 4096), { stream: true });
    return !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text);
  } catch (_) {
    return false;
  }
}

/// The body with one content coding undone, read piece by piece: a body kept cut decodes as far as
/// it goes, and a small body that inflates to gigabytes stops at DECODED_MAX.
async function inflate(data, format) {
  const reader = new Blob([data]).stream().pipeThrough(new DecompressionStream(format)).getReader();
  const parts = [];
  let size = 0;
  let error = null;
  let capped = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
      if (size >= DECODED_MAX) { capped = true; reader.cancel().catch(() => {}); break; }
    }
  } catch (e) {
    error = e;
  }
  const out = new Uint8Array(Math.min(size, DECODED_MAX));
  let at = 0;
  for (const part of parts) {
    const piece = part.subarray(0, out.length - at);
    out.set(piece, at);
    at += piece.length;
  }
  return { bytes: out, error, capped };
}

/// Undoes gzip and deflate (HTTP's deflate is zlib's format; a few servers send it raw); null
/// when a coding is one the page cannot undo.
async function decoded(raw, codings) {
  if (!codings.every((c) => c === "gzip" || c === "x-gzip" || c === "deflate")) return null;
  let result = { bytes: raw, error: null, capped: false };
  for (const coding of [...codings].reverse()) {
    const format = coding === "deflate" ? "deflate" : "gzip";
    let next = await inflate(result.bytes, format);
    if (format === "deflate" && next.error && !next.bytes.length) {
      const bare = await inflate(result.bytes, "deflate-raw");
      if (!bare.error || bare.bytes.length) next = bare;
    }
    result = { bytes: next.bytes, error: result.error || next.error, capped: result.capped || next.capped };
  }
  return result;
}

function hexDump(data) {
  const lines = [];
  const n = Math.min(data.length, HEX_SHOWN);
  for (let offset = 0; offset < n; offset += 16) {
    let hex = "";
    let text = "";
    for (let i = 0; i < 16; i++) {
      const at = offset + i;
      if (at < n) {
        const c = data[at];
        hex += `${c.toString(16).padStart(2, "0")} `;
        text += c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : ".";
      } else {
        hex += "   ";
      }
      if (i === 7) hex += " ";
    }
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex} |${text}|`);
  }
  return lines.join("\n");
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

/// A side of the task's record without a body to read: why, in words; null when there is one.
function bodyAbsence(r, side) {
  if (r.bodies && r.bodies[side]) return null;
  const sent = r.kind === "upload" || (r.upload && r.upload.completed > 0);
  if (side === "request" && !sent) return "none: the request had no body";
  if (side === "response" && r.kind === "download") return `none kept here: it is the download's file${r.file && r.file.path ? `, ${r.file.path}` : ""}`;
  if (side === "response" && r.status == null) return r.state === "completed" ? "none: no response came" : "none yet";
  if (!r.bodies) return "not recorded: no record rule named this task when it started (afproxyctl record HOST keeps the bodies of new tasks)";
  return side === "request" ? "not recorded: its record rule keeps responses only" : "not recorded: its record rule keeps requests only";
}

function recordedSize(kept) {
  if (kept.cut && kept.cutBy === "total") return "removed to keep record-max-total";
  return kept.cut ? `recorded ${bytes(kept.size)} of ${bytes(kept.seen)}: cut (${kept.cutBy || "limit"})` : `recorded ${bytes(kept.size)}`;
}

function showBodies(r) {
  if (bodies.id !== r.id) {
    for (const url of bodies.urls) URL.revokeObjectURL(url);
    bodies.id = r.id;
    bodies.keys = {};
    bodies.loaded = {};
    bodies.urls = [];
  }
  for (const side of ["request", "response"]) {
    const kept = r.bodies ? r.bodies[side] : null;
    const absent = bodyAbsence(r, side);
    const key = absent ? `absent ${absent}` : `${r.state} ${kept.size} ${kept.seen} ${kept.cut}`;
    if (bodies.keys[side] === key) continue;
    bodies.keys[side] = key;
    const box = $(`${side}-body`);
    if (absent) {
      showBody(box, absent.startsWith("none") ? "none" : "unrecorded", [element("div", "body-info muted", absent)]);
    } else if (r.state !== "completed") {
      showBody(box, "live", [element("div", "body-info muted", `recording: ${bytes(kept.size)} so far, shown when the task completes`)]);
    } else {
      showBody(box, "loading", [element("div", "body-info muted", `${recordedSize(kept)}, loading…`)]);
      loadBody(r, side, kept, key).catch((e) => {
        if (bodies.id === r.id && bodies.keys[side] === key) showBody(box, "error", [element("div", "body-info error", e.message)]);
      });
    }
  }
}

function showBody(box, view, nodes) {
  box.dataset.view = view;
  delete box.dataset.decoded;
  box.replaceChildren(...nodes);
}

async function loadBody(r, side, kept, key) {
  const current = () => bodies.id === r.id && bodies.keys[side] === key;
  const box = $(`${side}-body`);
  const response = await fetch(`/v1/tasks/${r.id}/body?side=${side}`, { cache: "no-store", credentials: "same-origin" });
  if (response.status === 401) locked();
  if (!response.ok) {
    // 404 or 410, with the reason in JSON.
    let reason = `${response.status}`;
    try { reason = (await response.json()).error || reason; } catch (_) { /* the status says it */ }
    if (current()) showBody(box, "error", [element("div", "body-info error", reason)]);
    return;
  }
  const raw = new Uint8Array(await response.arrayBuffer());
  if (!current()) return;
  bodies.loaded[side] = raw;
  const headers = side === "request" ? r.requestHeaders : r.responseHeaders;
  const type = headerValue(headers, "content-type") || "";
  const media = mediaType(type);
  const codings = codingsOf(headers);
  const facts = [recordedSize(kept), media || "no Content-Type"];
  const notes = [];
  let data = raw;
  let decodedFrom = null;
  if (codings.length) {
    const result = await decoded(raw, codings);
    if (!current()) return;
    if (result == null) {
      facts.push(`coded with ${codings.join(", ")}`);
      notes.push(`${codings.join(", ")} cannot be decoded in the page: the bytes as stored are shown (Download keeps them)`);
    } else if (result.error && !result.bytes.length) {
      facts.push(`coded with ${codings.join(", ")}`);
      notes.push(`could not be decoded from ${codings.join(", ")} (${result.error.message}): the bytes as stored are shown`);
    } else {
      data = result.bytes;
      decodedFrom = codings.join(", ");
      facts.push(`decoded from ${decodedFrom}: ${bytes(data.length)}`);
      if (result.capped) notes.push(`decoded only to its first ${bytes(DECODED_MAX)}`);
      else if (result.error) notes.push(`the coded bytes end early (${kept.cut ? "the body was kept cut" : result.error.message}): decoded as far as they go`);
    }
  }
  const plain = decodedFrom != null || !codings.length;
  let view = "hex";
  if (plain && IMAGES.has(media)) view = "image";
  else if (plain && isJSON(media)) view = "json";
  else if (plain && isText(media)) view = "text";
  else if (plain && !media && looksLikeText(data)) view = "text";
  let content;
  if (view === "json") {
    const text = textOf(data, type);
    content = element("pre", "body-text");
    try {
      if (data.length > PRETTY_MAX) throw new Error(`over ${bytes(PRETTY_MAX)}`);
      content.textContent = JSON.stringify(JSON.parse(text), null, 2);
    } catch (e) {
      view = "text";
      notes.push(`shown as text, not as JSON (${e.message})`);
    }
    if (view === "text") content.textContent = text;
  } else if (view === "text") {
    content = element("pre", "body-text");
    content.textContent = textOf(data, type);
  } else if (view === "image") {
    const url = URL.createObjectURL(new Blob([data], { type: media }));
    bodies.urls.push(url);
    content = element("img", "body-image");
    content.alt = `${side} body, ${media}`;
    content.addEventListener("error", () => {
      if (!current()) return;
      const pre = element("pre", "body-hex", hexDump(data));
      content.replaceWith(pre, element("p", "muted note", "the browser could not show it as an image: its bytes are shown"));
      box.dataset.view = "hex";
    }, { once: true });
    content.src = url;
  } else {
    content = element("pre", "body-hex", hexDump(data));
    if (data.length > HEX_SHOWN) notes.push(`the first ${bytes(HEX_SHOWN)} of ${bytes(data.length)} shown: Download has it all`);
  }
  if (content.tagName === "PRE" && content.classList.contains("body-text") && content.textContent.length > TEXT_SHOWN) {
    const whole = content.textContent.length;
    content.textContent = content.textContent.slice(0, TEXT_SHOWN);
    notes.push(`the first ${TEXT_SHOWN.toLocaleString()} of ${whole.toLocaleString()} characters shown: Download has it all`);
  }
  const info = element("div", "body-info");
  const download = element("button", "body-download", "Download");
  download.type = "button";
  download.dataset.filename = fileName(r.id, side, media, codings);
  download.title = `the body as stored (${bytes(raw.length)}), as ${download.dataset.filename}`;
  download.addEventListener("click", () => save(raw, type, download.dataset.filename));
  info.append(element("span", "muted", facts.join(" · ")), download);
  showBody(box, view, [info, content, ...notes.map((text) => element("p", "muted note", text))]);
  if (decodedFrom) box.dataset.decoded = decodedFrom;
  if (side === "request") showCurl(r);
}

/// A blob download: the bytes never leave the page.
function save(raw, type, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([raw], { type: type || "application/octet-stream" }));
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

function shellQuote(text) {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

// Fields curl writes itself (framing, the connection, the proxy's own credentials); Accept-Encoding
// becomes --compressed, so that curl decodes what it asked to be coded.
const CURL_LEAVES = new Set(["content-length", "connection", "proxy-connection", "keep-alive", "te", "trailer",
  "transfer-encoding", "upgrade", "expect", "proxy-authorization", "accept-encoding"]);

/// The request as a curl command line: method, URL, fields (credentials `<redacted>`, as the page
/// shows them everywhere), and the body inline when it was recorded whole as short text, else from
/// a file named in the note.
function curlCommand(r) {
  const args = ["curl"];
  const notes = [];
  const sent = r.kind === "upload" || (r.upload && r.upload.completed > 0);
  let data = null;
  if (sent) {
    const kept = r.bodies && r.bodies.request;
    const raw = bodies.id === r.id ? bodies.loaded.request : null;
    const media = mediaType(headerValue(r.requestHeaders, "content-type"));
    const codings = codingsOf(r.requestHeaders);
    if (raw && !kept.cut && raw.length <= CURL_INLINE_MAX && !codings.length && looksLikeText(raw) && !raw.includes(0)) {
      data = shellQuote(new TextDecoder().decode(raw));
    } else {
      const file = fileName(r.id, "request", media, codings);
      data = `@${file}`;
      if (kept && !kept.cut && kept.cutBy !== "total") notes.push(`The body is read from ${file}: Download it under Request body.`);
      else notes.push(`The request body was not recorded${kept ? " whole" : ""}: put it in ${file}.`);
    }
  }
  const method = r.method === "HEAD" ? " --head" : (r.method === "GET" && !sent) || (r.method === "POST" && sent) ? "" : ` -X ${r.method}`;
  args[0] = `curl${method} ${shellQuote(r.url || "")}`;
  let authority = null;
  try { authority = new URL(r.url).host; } catch (_) { authority = null; }
  const redacted = [];
  let compressed = false;
  for (const h of r.requestHeaders || []) {
    const name = h.name.toLowerCase();
    if (name === "accept-encoding") compressed = true;
    if (CURL_LEAVES.has(name) || (name === "host" && h.value === authority)) continue;
    const secret = SECRETS.has(name);
    if (secret && !redacted.includes(h.name)) redacted.push(h.name);
    args.push(`-H ${shellQuote(`${h.name}: ${secret ? "<redacted>" : h.value}`)}`);
  }
  if (compressed) args.push("--compressed");
  if (data) args.push(`--data-binary ${data}`);
  if (redacted.length) notes.unshift(`${redacted.join(", ")}: the values are <redacted>, as everywhere on this page; put the real ones in.`);
  return { text: args.join(" \\\n  "), note: notes.join(" ") };
}

function showCurl(r) {
  const { text, note } = curlCommand(r);
  const pre = $("curl-command");
  if (pre.textContent !== text) pre.textContent = text;
  const p = $("curl-note");
  if (p.textContent !== note) p.textContent = note;
}

async function copyCurl() {
  const result = $("task-action-result");
  const text = $("curl-command").textContent;
  try {
    await navigator.clipboard.writeText(text);
    result.className = "muted";
    result.textContent = "copied the curl command line";
  } catch (_) {
    // No clipboard for this page (a browser that asks first, or refuses): the command is selected.
    getSelection().selectAllChildren($("curl-command"));
    result.className = "error";
    result.textContent = "the clipboard refused: the command is selected below, copy it from there";
  }
}

async function replay(id) {
  const result = $("task-action-result");
  const button = $("task-replay");
  button.disabled = true;
  try {
    const record = await api("POST", `/v1/tasks/${id}/replay`);
    store(record);
    if (selected !== id) return;
    result.className = "muted";
    result.dataset.newId = String(record.id);
    result.replaceChildren("replayed as ", taskLink(record.id));
  } catch (e) {
    if (selected !== id) return;
    result.className = "error";
    delete result.dataset.newId;
    result.textContent = `replay refused: ${e.message}`;
  } finally {
    if (selected === id) renderDetail();
  }
}

// ---------- the task page: a held request's edit ----------

// A task a hold rule stopped before it went upstream (`heldBy`, suspended) can be changed, sent or
// answered from the page, as `afproxyctl edit / resume / respond / cancel` do: the form starts as
// the request is, and Save sends only what the person changed (PATCH /v1/tasks/{id}/request). The
// form is made again when the task's `edits` grow (a save here or an edit elsewhere) and goes away
// once the task is no longer held; the feed's redraws in between leave what is typed alone.
// Fields the proxy writes itself are shown but not editable (the daemon refuses them too).
const FIXED_FIELDS = new Set(["host", "content-length", "transfer-encoding", "expect", "connection", "keep-alive",
  "te", "trailer", "upgrade", "proxy-connection"]);
const EDIT_TEXT_MAX = 1024 * 1024;  // a recorded request body up to this size is put in the form
const REDACTED = "<redacted>";
// The form's task and the record it was made from (`key`: id and number of edits), the body it
// was filled with (null: none, an empty box keeps the request's body), whether the person typed
// in the body box, and the text of the last body a save here sent (the form is filled with it
// when no record rule kept it); `released`: the holds (holdOf: a task's at its request or at its
// response) this page let go (sent, answered, canceled), whose form stays away when a feed line made
// before that still has them held.
const editing = { key: null, id: null, record: null, bodyBase: null, bodyTouched: false, bodyLoad: null, sent: new Map(),
  released: new Set() };

/// A task stopped by a hold rule (before its request went upstream, or at its response), of a kind
/// an edit can change (not a tunnel, not a download afproxy makes itself: the daemon answers those 409).
function isHeld(r) {
  return r.state === "suspended" && r.heldBy != null && (r.kind === "data" || r.kind === "upload");
}

/// Held at its response (a hold rule with `response`): the origin's head came (its status is
/// known), nothing went to the client yet. Only the response can be changed then.
function isHeldResponse(r) {
  return isHeld(r) && r.status != null;
}

/// Which hold of a task (at its request or at its response): a task let go at its request can be
/// held again at its response.
function holdOf(r) {
  return `${r.id} ${r.status == null ? "request" : "response"}`;
}

/// The path and query of an absolute URL, as the daemon cuts it (no normalization).
function targetOf(url) {
  const at = url.indexOf("://");
  if (at < 0) return url;
  const rest = url.slice(at + 3);
  const end = rest.search(/[/?]/);
  return end < 0 ? "/" : rest.slice(end);
}

/// UTF-8 bytes of text in base64, as the API takes a body.
function base64(text) {
  const data = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return btoa(binary);
}

function editSay(text, isError) {
  const result = $("edit-result");
  result.className = isError ? "error" : "muted";
  result.textContent = text;
}

function actionSay(text, isError) {
  const result = $("task-action-result");
  delete result.dataset.newId;
  result.className = isError ? "error" : "muted";
  result.textContent = text;
}

function showEdit(r) {
  const section = $("task-edit");
  if (!isHeld(r) || isHeldResponse(r) || editing.released.has(holdOf(r))) {
    if (!section.hidden || editing.key != null) {
      section.hidden = true;
      editing.key = null;
      editing.record = null;
    }
    return;
  }
  const key = `${r.id} ${(r.edits || []).length}`;
  if (editing.key !== key) {
    if (editing.id !== r.id) {
      editSay("", false);
      showRespond(false);
      $("respond-status").value = "503";
      $("respond-headers").value = "";
      $("respond-body").value = "";
    }
    buildEdit(r, key);
  }
  section.hidden = false;
  editing.record = r;
  prefillBody(r);
}

function buildEdit(r, key) {
  // An edit of the same task that left the body alone leaves the body box as it was.
  const before = editing.id === r.id && editing.record ? (editing.record.edits || []).length : null;
  const bodyKept = before != null && !(r.edits || []).slice(before).some((e) => e.change.startsWith("body replaced"));
  editing.key = key;
  editing.id = r.id;
  editing.record = r;
  $("edit-method").value = r.method || "";
  $("edit-path").value = targetOf(r.url || "");
  $("edit-headers").tBodies[0].replaceChildren(...(r.requestHeaders || []).map((h, index) => headerRow(h, index)));
  if (!bodyKept) {
    editing.bodyBase = null;
    editing.bodyTouched = false;
    editing.bodyLoad = null;
    const sent = editing.sent.get(r.id);
    $("edit-body").value = sent == null ? "" : sent;
    if (sent != null) editing.bodyBase = sent;
  }
  bodyNote(r);
}

/// A row of a held request's or response's form (`side`): an existing field (its name fixed, its
/// value editable, a credential's shown `<redacted>`), or a new one (index null: name and value typed).
function headerRow(h, index, side = "request") {
  const tr = document.createElement("tr");
  const name = element("td");
  const value = element("td");
  const remove = element("td", "edit-remove");
  const input = element("input");
  input.spellcheck = false;
  input.className = "edit-value";
  if (index == null) {
    tr.dataset.added = "1";
    const nameInput = element("input");
    nameInput.className = "edit-name";
    nameInput.placeholder = "Name";
    nameInput.spellcheck = false;
    nameInput.setAttribute("aria-label", "new header name");
    name.append(nameInput);
    input.placeholder = "value";
    input.setAttribute("aria-label", "new header value");
  } else {
    tr.dataset.index = String(index);
    tr.dataset.name = h.name;
    name.textContent = h.name;
    input.value = SECRETS.has(h.name.toLowerCase()) ? REDACTED : h.value;
    input.setAttribute("aria-label", `${h.name} value`);
  }
  value.append(input);
  const fixed = index != null && FIXED_FIELDS.has(h.name.toLowerCase());
  if (fixed) {
    input.readOnly = true;
    tr.classList.add("fixed");
    tr.title = side === "request" ? `${h.name} is written by the proxy: it follows the URL and the body`
      : `${h.name} is written by the proxy: it frames the body the client gets`;
  } else {
    const button = element("button", "small", "×");
    button.type = "button";
    button.title = index == null ? "drop this row" : `remove ${h.name} from the ${side} (again: keep it)`;
    button.setAttribute("aria-label", button.title);
    button.addEventListener("click", () => {
      if (index == null) { tr.remove(); return; }
      const removed = tr.dataset.removed !== "1";
      tr.dataset.removed = removed ? "1" : "0";
      input.disabled = removed;
    });
    remove.append(button);
  }
  tr.append(name, value, remove);
  return tr;
}

/// The recorded request body goes in the form when it was kept whole and is text (a small body is
/// read from the client while the request is held), unless the person typed there first.
function prefillBody(r) {
  if (editing.bodyBase != null || editing.bodyTouched || editing.bodyLoad != null) return;
  const kept = r.bodies && r.bodies.request;
  const total = r.upload ? r.upload.total : null;
  if (!kept || kept.cut || total == null || total === 0 || kept.size !== total || kept.size > EDIT_TEXT_MAX) return;
  if (codingsOf(r.requestHeaders).length) return;
  const key = editing.key;
  editing.bodyLoad = key;
  bodyNote(r, "loading the recorded body…");
  (async () => {
    const response = await fetch(`/v1/tasks/${r.id}/body?side=request`, { cache: "no-store", credentials: "same-origin" });
    if (response.status === 401) locked();
    if (!response.ok) throw new Error(`${response.status}`);
    const raw = new Uint8Array(await response.arrayBuffer());
    if (editing.key !== key || editing.bodyTouched) return;
    const type = headerValue(r.requestHeaders, "content-type") || "";
    const media = mediaType(type);
    const text = isJSON(media) || isText(media) || looksLikeText(raw) ? textOf(raw, type) : null;
    if (text == null || raw.includes(0)) { editing.bodyLoad = "binary"; bodyNote(r); return; }
    $("edit-body").value = text;
    editing.bodyBase = text;
    bodyNote(r);
  })().catch(() => {
    if (editing.key === key) { editing.bodyLoad = "failed"; bodyNote(r); }
  });
}

function bodyNote(r, text) {
  const total = r.upload ? r.upload.total : null;
  let note = text;
  if (note == null) {
    if (editing.bodyBase != null) {
      note = "The request's body, as text: what you change here replaces it whole (sent as UTF-8); emptied, the request goes without a body.";
    } else if (total === 0 || (total == null && r.kind !== "upload")) {
      note = "The request has no body: text here becomes its body (UTF-8).";
    } else {
      const size = total != null ? ` (${bytes(total)})` : "";
      const why = !(r.bodies && r.bodies.request) ? "no record rule kept it" : editing.bodyLoad === "binary" ? "it is not text" : "it is not recorded whole as plain text";
      note = `The request's body${size} is not shown here (${why}): leave this empty to keep it; text here replaces it whole (UTF-8).`;
    }
  }
  const p = $("edit-body-note");
  if (p.textContent !== note) p.textContent = note;
}

/// The smallest edit that makes the request what the form shows: {edit} (empty: nothing changed)
/// or {error} for a form that cannot be sent as it is. A field's rows are compared by name: the
/// API sets a field whole (every value of that name), so a changed name is sent with all its
/// values (joined with commas, as HTTP joins them; a Cookie's with semicolons). A credential left
/// `<redacted>` keeps its value: only what the person typed is sent.
function editOf(r) {
  const edit = {};
  const method = $("edit-method").value.trim();
  if (!method) return { error: "the method is empty" };
  if (method !== r.method) edit.method = method;
  const path = $("edit-path").value.trim();
  if (path !== targetOf(r.url || "")) edit.path = path;
  const fields = fieldsEdit(r.requestHeaders || [], $("edit-headers"));
  if (fields.error) return fields;
  Object.assign(edit, fields);
  const text = $("edit-body").value;
  if (editing.bodyBase != null ? text !== editing.bodyBase : text !== "") edit.body = text;
  return { edit };
}

/// The fields to remove and set that make `headers` (the record's) what the rows of `table` show:
/// {removeHeaders?, setHeaders?} (none: no field changed), or {error}.
function fieldsEdit(headers, table) {
  const group = (map, name, value) => {
    const lower = name.toLowerCase();
    if (!map.has(lower)) map.set(lower, { name, values: [] });
    map.get(lower).values.push(value);
  };
  const original = new Map();
  for (const h of headers) group(original, h.name, h.value);
  const wanted = new Map();
  for (const tr of table.tBodies[0].rows) {
    if (tr.dataset.removed === "1") continue;
    const value = tr.querySelector(".edit-value").value.trim();
    if (tr.dataset.added === "1") {
      const name = tr.querySelector(".edit-name").value.trim();
      if (!name && !value) continue;
      if (!name) return { error: `a new header field needs a name (its value: ${value})` };
      if (SECRETS.has(name.toLowerCase()) && value === REDACTED) return { error: `${name}: ${REDACTED} stands for a value not shown: type the value to send` };
      group(wanted, name, value);
    } else {
      const h = headers[Number(tr.dataset.index)];
      group(wanted, h.name, SECRETS.has(h.name.toLowerCase()) && value === REDACTED ? h.value : value);
    }
  }
  const edit = {};
  const removeHeaders = [];
  for (const [lower, o] of original) if (!wanted.has(lower)) removeHeaders.push(o.name);
  const setHeaders = [];
  for (const [lower, w] of wanted) {
    const o = original.get(lower);
    if (o && o.values.length === w.values.length && o.values.every((v, i) => v === w.values[i])) continue;
    // Set-Cookie fields cannot be joined into one: the API sets a field whole, with one value.
    if (lower === "set-cookie" && w.values.length > 1) return { error: `${w.name}: the API sets it with one value: keep one ${w.name} row, or leave them all as they were` };
    setHeaders.push(`${w.name}: ${w.values.join(lower === "cookie" ? "; " : ", ")}`);
  }
  if (removeHeaders.length) edit.removeHeaders = removeHeaders;
  if (setHeaders.length) edit.setHeaders = setHeaders;
  return edit;
}

function editBusy(busy) {
  for (const id of ["edit-save", "edit-send", "edit-respond", "edit-cancel", "respond-send"]) $(id).disabled = busy;
}

/// Sends an edit of a held task's `side` (PATCH /v1/tasks/{id}/request or …/response, a body as
/// text sent as UTF-8 in base64): the record the daemon answered, or null when it refused (its
/// reason said in the form by `say`).
async function patchHeld(r, side, edit, say) {
  const sent = { ...edit };
  if (edit.body !== undefined) sent.body = base64(edit.body);
  try {
    return await api("PATCH", `/v1/tasks/${r.id}/${side}`, sent);
  } catch (e) {
    if (selected === r.id) say(`refused: ${e.message}`, true);
    return null;
  }
}

function savedSay(r, record, side, say) {
  const added = (record.edits || []).length - (r.edits || []).length;
  if (selected === r.id) say(`saved: ${added} change${added === 1 ? "" : "s"}, listed under Edits; the ${side} is still held`);
}

/// Saves what changed; true when the request is now as the form shows it.
async function saveEdit(r, edit) {
  const record = await patchHeld(r, "request", edit, editSay);
  if (!record) return false;
  if (edit.body !== undefined) editing.sent.set(r.id, edit.body);
  store(record);
  savedSay(r, record, "request", editSay);
  return true;
}

/// Cancel, from either form: the client is answered 503.
async function cancelHeld(r) {
  const record = await api("POST", `/v1/tasks/${r.id}/cancel`);
  editing.released.add(holdOf(r));
  store(record);
  actionSay("canceled: its client was answered 503");
}

async function resumeHeld(r, text) {
  const record = await api("POST", `/v1/tasks/${r.id}/resume`);
  editing.released.add(holdOf(r));
  store(record);
  actionSay(text);
}

async function editAction(name) {
  const r = editing.record;
  if (!r || selected !== r.id) return;
  editBusy(true);
  try {
    if (name === "cancel") { await cancelHeld(r); return; }
    const { edit, error } = editOf(r);
    if (error) { editSay(error, true); return; }
    const changed = Object.keys(edit).length > 0;
    if (name === "save") {
      if (!changed) { editSay("nothing to save: the form shows the request as it is"); return; }
      await saveEdit(r, edit);
      return;
    }
    if (changed && !(await saveEdit(r, edit))) return;
    await resumeHeld(r, (r.edits || []).length || changed ? "sent upstream as edited" : "sent upstream");
  } catch (e) {
    editSay(`refused: ${e.message}`, true);
  } finally {
    editBusy(false);
  }
}

function showRespond(shown) {
  $("edit-form").hidden = shown;
  $("respond-form").hidden = !shown;
  if (shown) $("respond-status").focus();
}

async function respond(event) {
  event.preventDefault();
  const r = editing.record;
  if (!r || selected !== r.id) return;
  const status = Number($("respond-status").value);
  const headers = $("respond-headers").value.split("\n").map((line) => line.trim()).filter(Boolean);
  const text = $("respond-body").value;
  const answer = { status };
  if (headers.length) answer.headers = headers;
  if (text) answer.body = base64(text);
  editBusy(true);
  try {
    const record = await api("POST", `/v1/tasks/${r.id}/respond`, answer);
    editing.released.add(holdOf(r));
    store(record);
    actionSay(`answered ${status} by afproxy: the origin never saw the request`);
  } catch (e) {
    if (selected === r.id) editSay(`refused: ${e.message}`, true);
  } finally {
    editBusy(false);
  }
}

// ---------- a response held at its head ----------
// The form of a task a hold rule with `response` stopped once the origin's head came, as
// `afproxyctl edit --status / resume / cancel` do: the status and the fields as the record has them
// (`status`, `responseHeaders`), and a body box, empty: an empty box keeps the origin's body, text
// typed there replaces it (the client then gets the edited head and that body, and the task
// completes). Save sends only what changed (PATCH /v1/tasks/{id}/response). Made again, as the
// request's form, when the task's `edits` grow; the feed's redraws in between leave it alone.
const heldResponse = { key: null, id: null, record: null };

function reditSay(text, isError) {
  const result = $("redit-result");
  result.className = isError ? "error" : "muted";
  result.textContent = text;
}

function showResponseEdit(r) {
  const section = $("response-edit");
  if (!isHeldResponse(r) || editing.released.has(holdOf(r))) {
    if (!section.hidden || heldResponse.key != null) {
      section.hidden = true;
      heldResponse.key = null;
      heldResponse.record = null;
    }
    return;
  }
  const key = `${r.id} ${(r.edits || []).length}`;
  if (heldResponse.key !== key) {
    if (heldResponse.id !== r.id) {
      reditSay("", false);
      $("redit-body").value = "";
    }
    heldResponse.key = key;
    heldResponse.id = r.id;
    $("redit-status").value = String(r.status);
    $("redit-headers").tBodies[0].replaceChildren(...(r.responseHeaders || []).map((h, index) => headerRow(h, index, "response")));
    const total = r.download ? r.download.total : null;
    $("redit-body-note").textContent = `Empty, the client gets the origin's body${total != null ? ` (${bytes(total)})` : ""} as it comes. `
      + "Text here replaces it (UTF-8): saved, the client gets the head above with this body, and the task completes.";
  }
  section.hidden = false;
  heldResponse.record = r;
}

/// The smallest edit that makes the response what the form shows: {edit} or {error}.
function responseEditOf(r) {
  const edit = {};
  const text = $("redit-status").value.trim();
  const status = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(status)) return { error: "the status is not a number" };
  if (status !== r.status) edit.status = status;
  const fields = fieldsEdit(r.responseHeaders || [], $("redit-headers"));
  if (fields.error) return fields;
  Object.assign(edit, fields);
  const body = $("redit-body").value;
  if (body !== "") edit.body = body;
  return { edit };
}

function reditBusy(busy) {
  for (const id of ["redit-save", "redit-send", "redit-cancel"]) $(id).disabled = busy;
}

async function responseAction(name) {
  const r = heldResponse.record;
  if (!r || selected !== r.id) return;
  reditBusy(true);
  try {
    if (name === "cancel") { await cancelHeld(r); return; }
    const { edit, error } = responseEditOf(r);
    if (error) { reditSay(error, true); return; }
    const changed = Object.keys(edit).length > 0;
    if (name === "save" && !changed) { reditSay("nothing to save: the form shows the response as it is"); return; }
    if (changed) {
      const record = await patchHeld(r, "response", edit, reditSay);
      if (!record) return;
      if (edit.body !== undefined) {
        // The typed body answered the client: the task completed, nothing is left to send.
        editing.released.add(holdOf(r));
        store(record);
        actionSay(`answered ${record.status} with the body typed here: the origin's body was dropped`);
        return;
      }
      store(record);
      if (name === "save") { savedSay(r, record, "response", reditSay); return; }
    }
    await resumeHeld(r, (r.edits || []).length || changed ? "sent on to the client as edited" : "sent on to the client");
  } catch (e) {
    reditSay(`refused: ${e.message}`, true);
  } finally {
    reditBusy(false);
  }
}

/// What a person changed, in order: listed whenever there is something.
function showEdits(r) {
  const list = $("detail-edits");
  const edits = r.edits || [];
  const key = JSON.stringify(edits);
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.hidden = !edits.length;
  $("edits-title").hidden = !edits.length;
  list.replaceChildren(...edits.map((e) => {
    const li = element("li", null, e.change);
    li.dataset.side = e.side;
    if (e.side !== "request") li.prepend(element("span", "muted", `${e.side}: `));
    return li;
  }));
}

// ---------- actions ----------

async function verb(id, name) {
  try {
    store(await api("POST", `/v1/tasks/${id}/${name}`));
    say(`task ${id}: ${name}`);
  } catch (e) {
    say(`task ${id}: ${e.message}`, true);
  }
}

async function all(name) {
  try {
    if (name === "cancel") {
      const ids = [...rows.entries()].filter(([id, tr]) => !tr.hidden && tasks.get(id).state !== "completed").map(([id]) => id);
      await Promise.all(ids.map((id) => api("POST", `/v1/tasks/${id}/cancel`).then(store, () => {})));
      say(`canceled ${ids.length} task${ids.length === 1 ? "" : "s"}`);
    } else {
      const list = await api("POST", `/v1/tasks/${name}?all=1`);
      list.tasks.forEach(store);
      say(`${name}d ${list.tasks.length} task${list.tasks.length === 1 ? "" : "s"}`);
    }
  } catch (e) {
    say(e.message, true);
  }
}

async function download(event) {
  event.preventDefault();
  const url = $("download-url").value.trim();
  const path = $("download-path").value.trim();
  try {
    const record = await api("POST", "/v1/downloads", path ? { url, path } : { url });
    store(record);
    say(`download started: task ${record.id}${record.file && record.file.path ? ` → ${record.file.path}` : ""}`);
    $("download-url").value = "";
    $("download-path").value = "";
  } catch (e) {
    say(`download refused: ${e.message}`, true);
  }
}

// ---------- wiring ----------

function taskInAddress() {
  const m = /^#task\/(\d+)$/.exec(location.hash);
  return m ? Number(m[1]) : null;
}

function openTask(id) {
  if (taskInAddress() !== id) location.hash = `task/${id}`; // the hashchange opens it
  else select(id);
}

function closeTask() {
  selected = null;
  $("detail").hidden = true;
  $("detail").parentElement.classList.remove("with-task");
  for (const tr of rows.values()) tr.classList.remove("selected");
  for (const url of bodies.urls) URL.revokeObjectURL(url);
  Object.assign(bodies, { id: null, keys: {}, loaded: {}, urls: [] });
  if (taskInAddress() != null) window.history.replaceState(null, "", location.pathname + location.search);
}

function start() {
  $("task-rows").addEventListener("click", (event) => {
    const tr = event.target.closest(".row");
    if (!tr) return;
    const id = Number(tr.dataset.id);
    const button = event.target.closest("button[data-verb]");
    if (button) { verb(id, button.dataset.verb); return; }
    openTask(id);
  });
  $("detail-close").addEventListener("click", closeTask);
  // The open task is in the address (#task/ID): a link to a task (a replay's) opens its page, and
  // back and forward move between the pages opened.
  window.addEventListener("hashchange", () => {
    const id = taskInAddress();
    if (id == null) { if (selected != null) closeTask(); } else if (id !== selected || $("detail").hidden) select(id);
  });
  $("task-replay").addEventListener("click", () => { if (selected != null) replay(selected); });
  $("task-curl").addEventListener("click", copyCurl);
  $("edit-form").addEventListener("submit", (event) => { event.preventDefault(); editAction("save"); });
  $("edit-send").addEventListener("click", () => editAction("send"));
  $("edit-cancel").addEventListener("click", () => editAction("cancel"));
  $("edit-respond").addEventListener("click", () => showRespond(true));
  $("respond-back").addEventListener("click", () => showRespond(false));
  $("respond-form").addEventListener("submit", respond);
  $("edit-body").addEventListener("input", () => { editing.bodyTouched = true; });
  for (const [button, table, side] of [["edit-add-header", "edit-headers", "request"], ["redit-add-header", "redit-headers", "response"]]) {
    $(button).addEventListener("click", () => {
      const tr = headerRow(null, null, side);
      $(table).tBodies[0].append(tr);
      tr.querySelector(".edit-name").focus();
    });
  }
  $("redit-form").addEventListener("submit", (event) => { event.preventDefault(); responseAction("save"); });
  $("redit-send").addEventListener("click", () => responseAction("send"));
  $("redit-cancel").addEventListener("click", () => responseAction("cancel"));
  $("filter-state").addEventListener("change", (e) => { filters.state = e.target.value; refilter(); });
  $("filter-kind").addEventListener("change", (e) => { filters.kind = e.target.value; refilter(); });
  $("filter-text").addEventListener("input", (e) => { filters.text = e.target.value.trim().toLowerCase(); refilter(); });
  $("history").addEventListener("change", (e) => {
    history = e.target.checked;
    if (history) {
      for (const timer of removals.values()) clearTimeout(timer);
      removals.clear();
      loadHistory().catch((error) => say(error.message, true));
    } else {
      generation++;
      for (const [id, record] of tasks) {
        if (record.state === "completed" && !removals.has(id)) { tasks.delete(id); speeds.delete(id); touch(id); }
      }
    }
  });
  $("suspend-all").addEventListener("click", () => all("suspend"));
  $("resume-all").addEventListener("click", () => all("resume"));
  $("cancel-all").addEventListener("click", () => all("cancel"));
  $("download-form").addEventListener("submit", download);
  // The page came with the live tasks as they were when it was made: drawn now, before any
  // request; the feed's first line then brings what changed since.
  const first = $("first-snapshot");
  if (first && first.textContent.trim()) {
    handle(JSON.parse(first.textContent));
    // The feed's first line (every live task) is read after that list is on the screen: read at
    // once, it held the first paint back until it was handled.
    requestAnimationFrame(() => setTimeout(follow, 0));
  } else {
    follow();
  }
  const opened = taskInAddress();
  if (opened != null) select(opened);
  pollNetwork();
  setInterval(pollNetwork, 10000);
  setInterval(tickAges, 1000);
}

start();
