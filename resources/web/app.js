// Web IS page: browse the IS servers of a DIALOG system, watch one object live (WebSocket /is/ws),
// chart one numeric attribute. Plain JavaScript, no libraries. State can be preset with the URL
// hash: #server=DAQ&regex=Run.*&object=DAQ.Run&chart=activeTime
'use strict';

const $ = (id) => document.getElementById(id);
const state = { server: '', object: '', type: null, chart: '', points: [], ws: null, updates: 0, wsRetry: 500 };
const NUMERIC = new Set(['s8', 'u8', 's16', 'u16', 's32', 'u32', 's64', 'u64', 'float', 'double']);
const MAX_POINTS = 600;
const MAX_ROWS = 1000; // rows shown in the list; narrow the filter for more

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  return { server: h.get('server') || '', regex: h.get('regex') || '', type: h.get('type') || '',
           object: h.get('object') || '', chart: h.get('chart') || '' };
}

function writeHash() {
  const h = new URLSearchParams();
  if (state.server) h.set('server', state.server);
  if ($('filter').value) h.set('regex', $('filter').value);
  if ($('type').value) h.set('type', $('type').value);
  if (state.object) h.set('object', state.object);
  if (state.chart) h.set('chart', state.chart);
  history.replaceState(null, '', '#' + h.toString());
}

// ---- token (dialog-isserver --http-token-file) ----
// Asked once when the server answers 401, kept for the browser tab (sessionStorage), sent as a
// bearer token with every request and as ?token= with the WebSocket (a browser cannot set its headers).
const TOKEN_KEY = 'dialog-is-token';
let tokenPrompt = null;

function askToken(why) {
  if (tokenPrompt) return tokenPrompt;
  tokenPrompt = new Promise((resolve) => {
    $('tokenwhy').textContent = why;
    $('login').hidden = false;
    $('token').focus();
    $('login').onsubmit = (e) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
      $('token').value = '';
      $('login').hidden = true;
      tokenPrompt = null;
      resolve();
    };
  });
  return tokenPrompt;
}

async function getJson(path) {
  for (;;) {
    const headers = { Accept: 'application/json' };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const r = await fetch(path, { headers });
    if (r.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      await askToken(token ? 'The token was not accepted; enter it again.' : 'This IS server needs a token.');
      continue;
    }
    if (!r.ok) throw new Error((await r.text()).trim());
    return r.json();
  }
}

function fmtTime(iso) {
  const d = new Date(iso.replace(/(\.\d{3})\d*Z$/, '$1Z'));
  return isNaN(d) ? iso : d.toLocaleString(undefined, { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

function fmtValue(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// ---- servers and object list ----
async function loadServers(preset) {
  try {
    const data = await getJson('is');
    const sel = $('server');
    sel.innerHTML = '';
    for (const s of data.servers) {
      const o = document.createElement('option');
      o.value = s.name;
      o.textContent = s.name + (s.objects === null ? ' (?)' : ` (${s.objects})`) + (s.local ? ' · local' : '');
      sel.appendChild(o);
    }
    const names = data.servers.map((s) => s.name);
    state.server = names.includes(preset) ? preset : (names.includes(state.server) ? state.server : (names.find((n, i) => data.servers[i].local) || names[0] || ''));
    sel.value = state.server;
  } catch (e) {
    $('listinfo').textContent = 'Cannot list the servers: ' + e.message;
  }
}

let listTimer = null;
async function loadObjects() {
  clearTimeout(listTimer);
  if (!state.server) return;
  const q = new URLSearchParams();
  if ($('filter').value) q.set('regex', $('filter').value);
  if ($('type').value) { q.set('type', $('type').value); q.set('subtypes', '1'); }
  try {
    const data = await getJson('is/' + encodeURIComponent(state.server) + (q.toString() ? '?' + q : ''));
    $('filter').classList.remove('invalid');
    renderList(data.objects.slice(0, MAX_ROWS));
    $('listinfo').textContent = `${data.objects.length} object(s) on ${state.server}` +
      (data.objects.length > MAX_ROWS ? ` — the first ${MAX_ROWS} shown, narrow the filter` : '');
  } catch (e) {
    $('filter').classList.toggle('invalid', /regular expression/.test(e.message));
    $('listinfo').textContent = e.message;
    renderList([]);
  }
  listTimer = setTimeout(loadObjects, 3000); // the list refreshes; the selected object is live
}

function renderList(objects) {
  const ul = $('objects');
  ul.innerHTML = '';
  for (const o of objects) {
    const li = document.createElement('li');
    li.dataset.name = o.name;
    li.className = o.name === state.object ? 'selected' : '';
    li.innerHTML = '<div class="name"></div><div class="sub"></div>';
    li.querySelector('.name').textContent = o.name;
    li.querySelector('.sub').textContent = o.type + ' · ' + fmtTime(o.time);
    li.onclick = () => selectObject(o.name);
    ul.appendChild(li);
  }
}

// ---- the selected object ----
async function selectObject(name, chart) {
  state.object = name;
  state.chart = chart || '';
  state.points = [];
  state.updates = 0;
  state.type = null;
  for (const li of $('objects').children) li.classList.toggle('selected', li.dataset.name === name);
  $('empty').hidden = true;
  $('object').hidden = false;
  $('objname').textContent = name;
  $('objerror').hidden = true;
  $('attrs').querySelector('tbody').innerHTML = '';
  $('chartbox').hidden = true;
  $('xmllink').href = 'is/' + encodeURIComponent(state.server) + '/' + encodeURIComponent(name);
  $('xmllink').textContent = '/is/' + state.server + '/' + name;
  writeHash();
  subscribe();
  if (state.chart) loadHistory();
}

// One fetch per type, shared by the values that arrive meanwhile (so they are shown in order).
const typeCache = new Map();
function ensureType(typeName) {
  if (!typeCache.has(typeName)) {
    const p = getJson('is/types/' + encodeURIComponent(typeName));
    p.catch(() => typeCache.delete(typeName)); // fetched again next time
    typeCache.set(typeName, p);
  }
  return typeCache.get(typeName).then((t) => (state.type = t));
}

function buildTable(type) {
  const body = $('attrs').querySelector('tbody');
  body.innerHTML = '';
  for (const a of type.allAttributes) {
    const tr = document.createElement('tr');
    tr.dataset.attr = a.name;
    tr.innerHTML = '<td class="attr"><span class="n"></span><span class="descr"></span></td><td class="type"></td><td class="val"></td><td class="chart"></td>';
    tr.querySelector('.n').textContent = a.name;
    tr.querySelector('.descr').textContent = a.description;
    tr.querySelector('.type').textContent = a.type + (a.vector ? '[]' : '');
    if (NUMERIC.has(a.type) && !a.vector) {
      const r = document.createElement('input');
      r.type = 'radio';
      r.name = 'chart';
      r.title = 'Chart this attribute';
      r.checked = a.name === state.chart;
      r.onchange = () => { state.chart = a.name; state.points = []; writeHash(); showChart(); loadHistory(); };
      tr.querySelector('.chart').appendChild(r);
    }
    body.appendChild(tr);
  }
  showChart();
}

async function showValue(ev) {
  let type;
  try { type = await ensureType(ev.type); } catch (e) { return showError('type ' + ev.type + ': ' + e.message); }
  if ($('attrs').querySelector('tbody').children.length !== type.allAttributes.length || $('objtype').textContent !== ev.type)
    buildTable(type);
  $('objtype').textContent = ev.type;
  $('objtime').textContent = fmtTime(ev.time);
  $('objupdates').textContent = String(state.updates);
  $('objerror').hidden = true;
  for (const tr of $('attrs').querySelector('tbody').children) {
    const cell = tr.querySelector('.val');
    const text = fmtValue(ev.value[tr.dataset.attr]);
    if (cell.textContent !== text) {
      cell.textContent = text;
      cell.classList.add('flash');
      requestAnimationFrame(() => requestAnimationFrame(() => cell.classList.remove('flash')));
    }
  }
  if (state.chart && ev.value[state.chart] !== undefined) {
    const v = Number(ev.value[state.chart]);
    if (Number.isFinite(v)) {
      state.points.push({ t: Date.parse(ev.time.replace(/(\.\d{3})\d*Z$/, '$1Z')) || Date.now(), v });
      if (state.points.length > MAX_POINTS) state.points.shift();
      drawChart();
    }
  }
}

function showError(text) {
  $('objerror').textContent = text;
  $('objerror').hidden = false;
}

// ---- live updates ----
function escapeRegex(s) { return s.replace(/[.[\]()*+?{}|^$\\]/g, '\\$&'); }

function subscribe() {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN || !state.object) return;
  const dot = state.object.indexOf('.');
  state.ws.send(JSON.stringify({ server: state.object.slice(0, dot), regex: escapeRegex(state.object.slice(dot + 1)) }));
}

function connect() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/is/ws' +
                           (token ? '?token=' + encodeURIComponent(token) : ''));
  state.ws = ws;
  ws.onopen = () => { $('status').textContent = 'live'; $('status').className = 'status on'; state.wsRetry = 500; subscribe(); };
  ws.onclose = (e) => {
    $('status').textContent = 'offline' + (e.reason ? ': ' + e.reason : '');
    $('status').className = 'status off';
    setTimeout(connect, state.wsRetry);
    state.wsRetry = Math.min(state.wsRetry * 2, 10000);
  };
  ws.onmessage = (m) => {
    let ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    if (ev.event === 'error') return showError(ev.error);
    if (ev.name !== state.object) return;
    if (ev.event === 'removed') { showError('removed at ' + fmtTime(ev.time)); return; }
    if (ev.event === 'updated' || ev.event === 'created') state.updates++;
    if (ev.value) showValue(ev);
  };
}

// ---- chart ----
// The chart starts from the IS server's history of the attribute (the last 10 minutes); live values
// received meanwhile follow it.
async function loadHistory() {
  const object = state.object, attr = state.chart;
  if (!object || !attr) return;
  const dot = object.indexOf('.');
  let h;
  try {
    h = await getJson('is/' + encodeURIComponent(object.slice(0, dot)) + '/' + encodeURIComponent(object) +
                      '/history?attr=' + encodeURIComponent(attr) + '&since=10m&points=' + MAX_POINTS);
  } catch (e) { return; } // no history (a server without one): the chart fills as values come
  if (state.object !== object || state.chart !== attr || !h.series || !h.series.length) return;
  const past = h.series[0].points.map((p) => ({ t: p[0], v: p[1] }));
  if (!past.length) return;
  const last = past[past.length - 1].t;
  state.points = past.concat(state.points.filter((p) => p.t > last)).slice(-MAX_POINTS);
  drawChart();
}

function showChart() {
  $('chartbox').hidden = !state.chart;
  $('chartname').textContent = state.chart;
  drawChart();
}

function drawChart() {
  const c = $('chart');
  if (!state.chart || c.offsetParent === null) return;
  const g = c.getContext('2d');
  const W = c.width, H = c.height, L = 64, R = 12, T = 12, B = 28;
  g.clearRect(0, 0, W, H);
  g.font = '11px system-ui, sans-serif';
  const pts = state.points;
  $('chartlast').textContent = pts.length ? '= ' + pts[pts.length - 1].v : '(waiting for values)';
  if (!pts.length) return;
  let lo = Math.min(...pts.map((p) => p.v)), hi = Math.max(...pts.map((p) => p.v));
  if (lo === hi) { lo -= 1; hi += 1; }
  const pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
  const t0 = pts[0].t, t1 = Math.max(pts[pts.length - 1].t, t0 + 1000);
  const x = (t) => L + (W - L - R) * (t - t0) / (t1 - t0);
  const y = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  g.strokeStyle = '#dde3ea'; g.fillStyle = '#6b7686'; g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const v = lo + (hi - lo) * i / 4, yy = Math.round(y(v)) + 0.5;
    g.beginPath(); g.moveTo(L, yy); g.lineTo(W - R, yy); g.stroke();
    g.textAlign = 'right'; g.fillText(Number(v.toPrecision(4)).toString(), L - 6, yy + 4);
  }
  g.textAlign = 'left'; g.fillText(new Date(t0).toLocaleTimeString(undefined, { hour12: false }), L, H - 8);
  g.textAlign = 'right'; g.fillText(new Date(t1).toLocaleTimeString(undefined, { hour12: false }), W - R, H - 8);
  g.strokeStyle = '#1f6feb'; g.lineWidth = 2; g.beginPath();
  pts.forEach((p, i) => (i ? g.lineTo(x(p.t), y(p.v)) : g.moveTo(x(p.t), y(p.v))));
  g.stroke();
  const last = pts[pts.length - 1];
  g.fillStyle = '#1f6feb'; g.beginPath(); g.arc(x(last.t), y(last.v), 3.5, 0, 2 * Math.PI); g.fill();
}

// ---- start ----
async function main() {
  const preset = readHash();
  $('filter').value = preset.regex;
  $('type').value = preset.type;
  await loadServers(preset.server);
  $('server').onchange = () => { state.server = $('server').value; writeHash(); loadObjects(); };
  let typing = null;
  const refilter = () => { clearTimeout(typing); typing = setTimeout(() => { writeHash(); loadObjects(); }, 250); };
  $('filter').oninput = refilter;
  $('type').oninput = refilter;
  connect();
  await loadObjects();
  if (preset.object) selectObject(preset.object, preset.chart);
  setInterval(() => loadServers(state.server), 10000);
}
main();
