// The routecalc page: pick, paste or upload a position, solve it or check proposed
// routes, show the board, the routes and their revenue. Plain DOM code against the
// service's /v1 API.
"use strict";

const $ = (id) => document.getElementById(id);

// Each change of the position, each solve and each check starts a new generation;
// an answer that arrives for an older one is dropped (and its request aborted), so
// no answer ever shows under another position.
let generation = 0;
let inFlight = null;  // the AbortController of the running request
let loads = 0;  // example downloads: only the last one picked fills the box

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.className = kind || "";
}

async function apiError(response) {
  let body = null;
  try { body = await response.json(); } catch (e) { /* not JSON */ }
  if (body && body.error) return `${response.status}: ${body.error}`;
  return `${response.status} ${response.statusText}`;
}

async function loadChoices() {
  const [fixtures, health] = await Promise.all([
    fetch("/v1/fixtures").then((r) => r.json()),
    fetch("/healthz").then((r) => r.json()),
  ]);
  for (const f of fixtures) {
    const who = f.company ? `, ${f.company}: ${f.trains.join(", ")}` : "";
    const option = new Option(`${f.name} (${f.game}${who})`, f.name);
    $("fixture").add(option);
  }
  for (const name of health.solvers) {
    $("solver").add(new Option(name, name, false, name === health.default_solver));
  }
  $("time-limit").max = health.max_time_limit;
}

// The answer on the page belongs to the position as it was: a new position clears
// it and drops whatever is still running for the old one.
function positionChanged() {
  dropAnswer();
  setBusy(false);
}

// A new generation: the answer shown and the request running are both the last one's.
function dropAnswer() {
  generation += 1;
  if (inFlight) inFlight.abort();
  inFlight = null;
  clearAnswer();
}

async function pickFixture() {
  const name = $("fixture").value;
  $("upload").value = "";
  if (!name) return;
  const mine = ++loads;
  const response = await fetch(`/v1/fixtures/${encodeURIComponent(name)}`);
  if (mine !== loads) return;  // another example was picked meanwhile
  if (!response.ok) { setStatus(await apiError(response), "error"); return; }
  const text = JSON.stringify(await response.json(), null, 1);
  if (mine !== loads) return;
  $("position").value = text;
  positionChanged();
  setStatus(`Example ${name} loaded: press Solve.`);
}

function uploadFile() {
  const file = $("upload").files[0];
  if (!file) return;
  const mine = ++loads;
  file.text().then((text) => {
    if (mine !== loads) return;
    $("position").value = text;
    $("fixture").value = "";
    $("upload").value = "";  // the same file picked again is read again
    positionChanged();
    setStatus(`${file.name} loaded: press Solve.`);
  });
}

// Table rows as [label, path, revenue]: a company's routes, or 18XS's transports.
function drawnLines(answer) {
  return (answer.routes || []).map((route) => {
    const skip = new Set(route.skip || []);
    return [route.train, route.nodes.map((n) => (skip.has(n) ? `(${n})` : n)).join(" – "), route.revenue];
  }).concat((answer.plan || []).map((t) => [`${t.cube.color} cube`, `${t.cells.join(" – ")} (${t.to_kind})`, t.income]));
}

function showTable(answer) {
  const body = $("revenue").tBodies[0];
  body.replaceChildren();
  const lines = $("board").querySelectorAll("polyline.route");
  const rows = drawnLines(answer);
  $("revenue").tHead.rows[0].cells[0].textContent = answer.plan ? "cube" : "train";  // 18XS: transports
  rows.forEach(([label, path, revenue], k) => {
    const row = body.insertRow();
    const train = row.insertCell();
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    if (lines[k]) swatch.style.background = lines[k].style.stroke;
    train.append(swatch, label);
    row.insertCell().textContent = path;
    row.insertCell().textContent = revenue;
  });
  for (const part of answer.parts || []) {  // revenue that is not a route's (18Cuba's sugar, fees, ...)
    const row = body.insertRow();
    row.className = "part";
    row.insertCell().textContent = part.name;
    row.insertCell().textContent = part.detail;
    row.insertCell().textContent = part.amount;
  }
  if (!rows.length && !(answer.parts || []).length) {
    const row = body.insertRow();
    row.insertCell().textContent = "–";
    // a search the time limit stopped has not shown that nothing runs; where the
    // engine knows why nothing runs (no token of the company: a misspelt id) it says so
    const why = answer.stats?.auto?.why ?? "";
    row.insertCell().textContent = answer.status && answer.status !== "optimal"
      ? "no route found before the time limit"
      : why.endsWith("no train can run") ? why : "no train can run";
    row.insertCell().textContent = "0";
  }
  $("revenue-total").textContent = answer.revenue;
  $("revenue").hidden = false;
}

function clearAnswer() {
  $("board").innerHTML = "";
  $("revenue").hidden = true;
  $("copy-routes").hidden = true;
  delete $("status").dataset.revenue;
  delete $("status").dataset.state;
}

// While a request runs the buttons wait.
function setBusy(busy) {
  for (const id of ["solve", "check"]) {
    $(id).disabled = busy;
    $(id).setAttribute("aria-busy", busy);
  }
}

// The position as typed, or a message naming what is wrong with the input.
function readPosition() {
  const text = $("position").value.trim();
  if (!text) return { error: "Paste, upload or pick a position first." };
  try { return { text, position: JSON.parse(text) }; } catch (e) { return { error: `Not JSON: ${e.message}` }; }
}

// The time limit field as a query value: a positive number, capped at the server's.
function readTimeLimit() {
  const field = $("time-limit");
  const seconds = Number(field.value);
  if (field.value.trim() === "" || !Number.isFinite(seconds) || seconds <= 0) {
    return { error: `Time limit (s): ${JSON.stringify(field.value)} is not a number of seconds above 0.` };
  }
  const most = Number(field.max);
  return { seconds: most > 0 ? Math.min(seconds, most) : seconds };
}

// Runs one request of a new generation: work(signal, mine) does the fetching and
// returns false once its generation is over; errors and aborts end here.
async function run(work) {
  dropAnswer();
  const mine = generation;
  const controller = new AbortController();
  const pressed = document.activeElement;  // a disabled button loses the focus: given back at the end
  inFlight = controller;
  setBusy(true);
  try {
    await work(controller.signal, () => mine === generation);
  } catch (e) {
    if (mine === generation && e.name !== "AbortError") setStatus(`Request failed: ${e.message}`, "error");
  } finally {
    if (mine === generation) {
      inFlight = null;
      setBusy(false);
      if (pressed && pressed.tagName === "BUTTON" && document.activeElement === document.body) pressed.focus();
    }
  }
}

// A request body holding the position as its text was typed: parsed and written
// again, 1.0 or 1e0 would become 1, and the service would judge another input
// than the one Solve sends.
function withPosition(text, routes) {
  return `{"position": ${text}, "routes": ${routes}}`;
}

async function drawBoard(text, routes, signal) {
  const board = await fetch("/v1/render", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: withPosition(text, JSON.stringify(routes)), signal,
  });
  if (!board.ok) return apiError(board);
  $("board").innerHTML = await board.text();
  return null;
}

function solve() {
  return run(async (signal, current) => {
    const input = readPosition();
    const limit = readTimeLimit();
    if (input.error || limit.error) { setStatus(input.error || limit.error, "error"); return; }
    const params = new URLSearchParams({ time_limit: limit.seconds });
    if ($("solver").value) params.set("solver", $("solver").value);
    setStatus(`Solving (time limit ${limit.seconds} s)…`, "busy");
    const started = performance.now();
    const response = await fetch(`/v1/solve?${params}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: input.text, signal,
    });
    if (!current()) return;
    if (!response.ok) { setStatus(await apiError(response), "error"); return; }
    const answer = await response.json();
    const failed = await drawBoard(input.text, answer.routes || answer.plan, signal);
    if (!current()) return;
    if (failed) { setStatus(failed, "error"); return; }
    showTable(answer);
    const seconds = ((performance.now() - started) / 1000).toFixed(2);
    setStatus(`${answer.company || answer.game}: revenue ${answer.revenue}, ${answer.status} (bound ${answer.bound}), ` +
              `solver ${answer.solver}, solved in ${answer.elapsed.toFixed(3)} s (${seconds} s with drawing; ` +
              `time limit ${limit.seconds} s)`, answer.status === "optimal" ? "done" : "cut");
    if (answer.connect) {  // 18C2C's destination proof
      const c = answer.connect;
      const said = c.possible === null ? "unknown (time limit)" : !c.possible ? "impossible"
        : `possible with the ${c.route.train}${c.unfolded ? " unfolded" : ""}: ${c.route.nodes.join(" – ")}`;
      $("status").textContent += `; connect ${said}`;
    }
    $("status").dataset.revenue = answer.revenue;
    $("status").dataset.state = answer.status;
    $("copy-routes").hidden = false;
    $("copy-routes").onclick = () => {
      $("routes").value = JSON.stringify(answer.routes || answer.plan, null, 1);
      $("routes").focus();
    };
  });
}

// Proposed routes (the format's route list; 18XS: the transports) checked by the
// validator: their revenue, or the rule the first bad one breaks.
function check() {
  return run(async (signal, current) => {
    const input = readPosition();
    if (input.error) { setStatus(input.error, "error"); return; }
    const routesText = $("routes").value.trim();
    let routes;
    try { routes = JSON.parse(routesText || "null"); } catch (e) {
      setStatus(`Routes to check: not JSON: ${e.message}`, "error");
      return;
    }
    if (routes === null) { setStatus("Routes to check: give a list of routes first.", "error"); return; }
    setStatus("Checking…", "busy");
    const response = await fetch("/v1/validate", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: withPosition(input.text, routesText), signal,
    });
    if (!current()) return;
    if (!response.ok) { setStatus(`Routes to check: ${await apiError(response)}`, "error"); return; }
    const result = await response.json();
    if (!result.valid) {
      const v = result.violation;
      const which = v.route === null || v.route === undefined ? "" : `route ${v.route}: `;
      // an ambiguous route: the tracks it may mean, each as it is given in "hexes"
      const choices = (v.choices || []).map((cells) => JSON.stringify(cells)).join(" or ");
      setStatus(`Not valid: ${which}${v.rule}: ${v.detail}${choices ? ` (the tracks: ${choices})` : ""}`, "error");
      $("status").dataset.state = "invalid";
      return;
    }
    const failed = await drawBoard(input.text, result.routes || result.plan, signal);
    if (!current()) return;
    if (failed) { setStatus(failed, "error"); return; }
    showTable(result);
    setStatus(`Valid: revenue ${result.revenue}`, "done");
    $("status").dataset.revenue = result.revenue;
    $("status").dataset.state = "valid";
  });
}

$("fixture").addEventListener("change", pickFixture);
$("upload").addEventListener("change", uploadFile);
$("position").addEventListener("input", () => {
  loads++;  // what the player types wins over an example still on its way
  positionChanged();
  setStatus("Position edited: press Solve.");
});
$("solve-form").addEventListener("submit", (event) => { event.preventDefault(); solve(); });
$("check").addEventListener("click", check);
loadChoices().catch((e) => setStatus(`Cannot reach the service: ${e.message}`, "error"));
