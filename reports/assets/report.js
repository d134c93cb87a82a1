// cachelab report: renders the timeline, the trace table and the record
// details from the JSON inlined in #cachelab-data. No dependencies, no
// network. Everything is drawn lazily: the timeline draws only the visible
// window and merges marks closer than a few pixels; the table draws only
// the visible rows.
(function () {
  'use strict';
  var T0 = performance.now();
  var D = JSON.parse(document.getElementById('cachelab-data').textContent);
  var S = D.S;
  var ROW_H = 24, GROUP_H = 22, AXIS_H = 26, PAD = 12, BIN = 4;
  var COLORS = {
    green: '#2da44e', blue: '#3b7dd8', red: '#d1242f', purple: '#8250df', gray: '#8c959f',
    orange: '#d4760a', magenta: '#bf3989', teal: '#1b7c83', indigo: '#5a5fd6', dark: '#32383f'
  };

  // ---- records -----------------------------------------------------------
  function s(i) { return S[i || 0]; }
  var recs = D.recs.map(function (r, i) {
    return {
      i: i, pos: r.p || i, t: r.t || 0, kind: s(r.k), lane: (r.l || 0) - 1, actor: s(r.a), verb: s(r.vb),
      resource: s(r.r), ns: s(r.n), name: s(r.nm), uid: s(r.u), rv: r.rv || 0, oldUID: s(r.ou),
      oldRV: r.orv || 0, owner: s(r.ow), object: r.o, byGC: !!r.gc, code: r.c || 0, reason: s(r.rs),
      lag: r.lg || 0, count: r.ct || 0, watcher: s(r.w), watchList: !!r.wl, event: s(r.e),
      initial: !!r.in, tombstone: !!r.ts, handler: s(r.h), signal: s(r.s), value: !!r.v, op: s(r.op),
      key: s(r.ky), result: s(r.re), step: r.st || 0, fault: s(r.f), breaking: !!r.cb,
      objects: r.os || null, detail: s(r.d), stepText: s(r.sd)
    };
  });
  var byPos = {};
  recs.forEach(function (r) { byPos[r.pos] = r.i; });
  function obj(i) {
    var o = D.objs[i];
    return { resource: s(o[0]), ns: s(o[1]), name: s(o[2]), uid: s(o[3]), rv: o[4], terminating: !!o[5], finalizers: s(o[6]), owner: s(o[7]) };
  }
  function shortRes(r) { return r ? r.split('.')[0] : ''; }
  function objName(r) { return (r.ns ? r.ns + '/' : '') + r.name; }
  function what(r) { return (shortRes(r.resource) + ' ' + objName(r)).trim(); }
  var HANDLER = { ADDED: 'OnAdd', MODIFIED: 'OnUpdate', DELETED: 'OnDelete' };
  function summary(r) {
    switch (r.kind) {
      case 'write': return (r.byGC ? 'gc ' : '') + r.verb + ' ' + what(r) + ' → rv ' + r.rv;
      case 'request': return r.verb + ' ' + what(r) + ' → ' + (r.code || '?') + (r.reason ? ' ' + r.reason : '') + (r.fault ? ' (fault: ' + r.fault + ')' : '');
      case 'list': return 'list ' + shortRes(r.resource) + (r.ns ? ' in ' + r.ns : '') + ' at rv ' + r.rv + ': ' + r.count + ' objects' + (r.lag ? ' (replica ' + r.lag + ' behind)' : '');
      case 'watch-open': return 'watch ' + (r.watcher || shortRes(r.resource)) + ' from rv ' + r.rv + (r.watchList ? ' (WatchList)' : '');
      case 'watch-close': return r.watcher + ' closed' + (r.reason ? ': ' + r.reason : '');
      case 'sent': return 'server sent ' + r.event + ' ' + objName(r) + (r.rv ? ' rv ' + r.rv : '') + (r.initial ? ' (initial)' : '');
      case 'delivered': return 'received ' + r.event + ' ' + objName(r) + (r.rv ? ' rv ' + r.rv : '') + (r.initial ? ' (initial)' : '');
      case 'fault': return r.fault + (r.breaking ? ' (contract-breaking)' : '') + (r.watcher ? ' on ' + r.watcher : (r.name ? ' on ' + what(r) : '')) + (r.detail ? ': ' + r.detail : '');
      case 'compact': return 'history compacted up to rv ' + r.rv;
      case 'handler': return (HANDLER[r.event] || r.event || 'handler') + ' ' + objName(r) + ' rv ' + r.rv + (r.oldRV ? ' (old rv ' + r.oldRV + (r.oldUID && r.oldUID !== r.uid ? ', other uid' : '') + ')' : '') + (r.initial ? ' · initial list' : '') + (r.tombstone ? ' · tombstone' : '');
      case 'signal': return r.signal + ' = ' + r.value + (r.resource ? ' (' + shortRes(r.resource) + ')' : '') + (r.detail ? ' · ' + r.detail : '');
      case 'queue': return r.op + ' ' + r.key;
      case 'reconcile':
        if (r.op === 'start') return 'reconcile ' + r.key + ' starts';
        return 'reconcile ' + r.key + ': ' + (r.result || (r.op ? r.op : '?')) + (r.detail ? ' · ' + r.detail : '');
      case 'cache': return 'cache ' + r.handler + ' snapshot: ' + (r.objects ? r.objects.length : 0) + ' objects' + (r.detail ? ' · ' + r.detail : '');
      case 'final': return 'server state at the end: ' + (r.objects ? r.objects.length : 0) + ' objects';
      case 'note': return r.detail;
      case 'log': return (r.op === 'error' ? 'error: ' : '') + r.detail + (r.reason ? ': ' + r.reason : '');
      case 'step': return 'step ' + r.step + ': ' + r.actor + ' ' + (r.stepText || r.op) + (r.detail && r.detail !== r.stepText ? ' · ' + r.detail : '');
      case 'crash': return r.actor + ' crashed' + (r.detail ? ': ' + r.detail : '');
      case 'restart': return r.actor + ' restarted';
      case 'desired': return 'desired == actual: ' + r.value + (r.detail ? ' (' + r.detail + ')' : '');
    }
    return r.kind + ' ' + what(r);
  }
  function eventColor(e) {
    return e === 'ADDED' ? COLORS.green : e === 'DELETED' ? COLORS.red : e === 'MODIFIED' ? COLORS.blue : e === 'ERROR' ? COLORS.red : COLORS.gray;
  }
  // style returns how a record is drawn: color, shape and priority (the
  // record shown for a merged mark is the one with the highest priority).
  function style(r) {
    switch (r.kind) {
      case 'write':
        if (r.byGC) return { c: COLORS.purple, sh: 'tick', p: 3 };
        return { c: r.verb === 'create' ? COLORS.green : r.verb === 'delete' ? COLORS.red : COLORS.blue, sh: 'tick', p: r.verb === 'delete' ? 4 : 2 };
      case 'compact': return { c: COLORS.gray, sh: 'block', p: 1 };
      case 'final': return { c: COLORS.dark, sh: 'diamond', p: 1 };
      case 'request':
        if (r.code >= 400 || r.fault) return { c: r.code >= 500 || r.fault ? COLORS.red : COLORS.orange, sh: 'tick', p: 5 };
        return { c: COLORS.gray, sh: 'thin', p: 1 };
      case 'list': return { c: COLORS.purple, sh: 'block', p: 3 };
      case 'watch-open': return { c: '#4a7ab8', sh: 'open', p: 1 };
      case 'watch-close': return { c: r.reason && r.reason.indexOf('fault') >= 0 ? COLORS.orange : '#4a7ab8', sh: 'close', p: 2 };
      case 'sent': return { c: eventColor(r.event), sh: 'sent', p: 0 };
      case 'delivered': return { c: eventColor(r.event), sh: r.initial ? 'hollow' : 'tick', p: r.event === 'DELETED' ? 3 : 2 };
      case 'fault': return { c: r.breaking ? COLORS.magenta : COLORS.orange, sh: 'diamond', p: 5 };
      case 'handler': return { c: eventColor(r.event), sh: r.tombstone ? 'ring' : r.initial ? 'hollow' : 'tick', p: r.tombstone ? 5 : r.event === 'DELETED' ? 3 : 2 };
      case 'cache': return { c: COLORS.dark, sh: 'square', p: 1 };
      case 'queue':
        return { c: r.op === 'add' ? COLORS.teal : r.op === 'get' ? COLORS.indigo : r.op === 'requeue' ? COLORS.orange : COLORS.gray, sh: r.op === 'done' || r.op === 'forget' ? 'thin' : 'tick', p: r.op === 'requeue' ? 4 : 1 };
      case 'reconcile':
        if (r.op === 'start') return { c: COLORS.indigo, sh: 'thin', p: 0 };
        return { c: r.result === 'ok' || (r.result === '' && r.op !== 'end') ? COLORS.green : COLORS.red, sh: 'tick', p: r.result === 'ok' ? 1 : 4 };
      case 'step': return { c: COLORS.dark, sh: 'step', p: 2 };
      case 'crash': return { c: COLORS.red, sh: 'x', p: 6 };
      case 'restart': return { c: COLORS.green, sh: 'tick', p: 3 };
      case 'note': return { c: COLORS.gray, sh: 'dot', p: 0 };
      case 'log': return { c: r.op === 'error' ? COLORS.red : COLORS.gray, sh: 'dot', p: r.op === 'error' ? 1 : 0 };
    }
    return { c: COLORS.gray, sh: 'dot', p: 0 };
  }
  recs.forEach(function (r) { r.st = style(r); r.text = summary(r); });

  // ---- utilities -----------------------------------------------------------
  function esc(x) {
    return String(x).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; });
  }
  function fmtTime(ns) {
    if (ns === 0) return '0s';
    var sec = ns / 1e9;
    if (ns % 1e6 === 0) return sec.toFixed(3) + 's';
    return sec.toFixed(6) + 's';
  }
  function fmtStep(ns) {
    if (ns === 0) return '0';
    if (ns >= 1e9) return trim(ns / 1e9) + 's';
    if (ns >= 1e6) return trim(ns / 1e6) + 'ms';
    if (ns >= 1e3) return trim(ns / 1e3) + 'µs';
    return trim(ns) + 'ns';
  }
  function trim(x) { return String(+x.toFixed(3)); }
  function $(id) { return document.getElementById(id); }

  // ---- state ---------------------------------------------------------------
  var st = {
    mode: D.mode === 'order' ? 'order' : 'time',
    k: 1, // pixels per unit (ns or record)
    sel: -1, // selected record index
    hl: {}, // highlighted record indexes (evidence)
    hlList: [],
    failure: D.failure >= 0 && byPos[D.failure] !== undefined ? byPos[D.failure] : -1
  };
  function xOf(r) { return st.mode === 'time' ? r.t : r.i + 0.5; }
  function span() { return st.mode === 'time' ? Math.max(D.end, 1) : Math.max(recs.length, 1); }

  // ---- lanes -------------------------------------------------------------
  var lanes = D.lanes.map(function (l, i) { return { i: i, group: l.g, label: l.l, help: l.h, style: l.s, recs: [] }; });
  recs.forEach(function (r) { if (r.lane >= 0 && lanes[r.lane]) lanes[r.lane].recs.push(r); });
  var subjectActor = (D.subject || '').split('/')[0];
  var rows = [], y = 0, prevGroup = null;
  lanes.forEach(function (l) {
    if (l.group !== prevGroup) {
      rows.push({ type: 'group', name: l.group, y: y, h: GROUP_H });
      y += GROUP_H;
      prevGroup = l.group;
    }
    l.y = y;
    rows.push({ type: 'lane', lane: l, y: y, h: ROW_H });
    y += ROW_H;
  });
  var LANES_H = y;

  // Spans: watch connections (open..close) and process down times
  // (crash..restart), per lane, in record order.
  function spans(l) {
    var out = [];
    if (l.style === 'watch') {
      var open = {};
      l.recs.forEach(function (r) {
        if (r.kind === 'watch-open') open[r.watcher || '?'] = r;
        else if (r.kind === 'watch-close' && open[r.watcher || '?']) {
          out.push({ a: open[r.watcher || '?'], b: r, w: r.watcher });
          delete open[r.watcher || '?'];
        }
      });
      Object.keys(open).forEach(function (w) { out.push({ a: open[w], b: null, w: w }); });
    } else if (l.style === 'process') {
      var down = null;
      l.recs.forEach(function (r) {
        if (r.kind === 'crash' && !down) down = r;
        else if (r.kind === 'restart' && down) { out.push({ a: down, b: r }); down = null; }
      });
      if (down) out.push({ a: down, b: null });
    }
    return out;
  }
  lanes.forEach(function (l) { l.spans = spans(l); });

  // ---- timeline DOM ------------------------------------------------------
  var tl = $('timeline');
  tl.innerHTML = '';
  var labels = document.createElement('div');
  labels.className = 'tl-labels';
  var lh = '<div class="tl-axis-pad" style="height:' + AXIS_H + 'px"></div>';
  rows.forEach(function (row) {
    if (row.type === 'group') {
      var tag = row.name === subjectActor || row.name === D.subject ? '<span class="tag">subject</span>' : '';
      lh += '<div class="tl-group" style="height:' + row.h + 'px">' + esc(row.name) + tag + '</div>';
    } else {
      lh += '<div class="lane-label" data-lane="' + row.lane.i + '" style="height:' + row.h + 'px" title="' + esc(row.lane.label + ': ' + row.lane.help) + '">' + esc(row.lane.label) + '</div>';
    }
  });
  labels.innerHTML = lh;
  var scroller = document.createElement('div');
  scroller.className = 'tl-scroll';
  var spacer = document.createElement('div');
  spacer.className = 'tl-spacer';
  spacer.style.height = (AXIS_H + LANES_H) + 'px';
  var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'tl-svg');
  svg.setAttribute('height', AXIS_H + LANES_H);
  spacer.appendChild(svg);
  scroller.appendChild(spacer);
  tl.appendChild(labels);
  tl.appendChild(scroller);

  function viewW() { return Math.max(scroller.clientWidth, 200); }
  function fitK() { return (viewW() - 2 * PAD) / span(); }
  function maxK() { return st.mode === 'time' ? Math.max(fitK() * 2e4, 2e-6 * 50) : 60; }
  function setK(k, anchorPx) {
    var vw = viewW();
    if (anchorPx === undefined) anchorPx = vw / 2;
    var unitAtAnchor = (scroller.scrollLeft + anchorPx - PAD) / st.k;
    st.k = Math.min(Math.max(k, fitK()), maxK());
    var w = Math.min(span() * st.k + 2 * PAD, 3e7);
    spacer.style.width = w + 'px';
    scroller.scrollLeft = unitAtAnchor * st.k + PAD - anchorPx;
    render();
  }
  function centerOn(r) {
    var px = xOf(r) * st.k + PAD;
    scroller.scrollLeft = px - viewW() / 2;
  }

  var clusters = [];
  function markSVG(sh, x, y0, c, attrs) {
    var h = ROW_H, cy = y0 + h / 2;
    switch (sh) {
      case 'thin': return '<rect ' + attrs + ' x="' + (x - 0.75) + '" y="' + (y0 + 7) + '" width="1.5" height="' + (h - 14) + '" fill="' + c + '"/>';
      case 'hollow': return '<rect ' + attrs + ' x="' + (x - 1.75) + '" y="' + (y0 + 5.5) + '" width="3.5" height="' + (h - 11) + '" fill="#fff" stroke="' + c + '" stroke-width="1.5"/>';
      case 'sent': return '<rect ' + attrs + ' x="' + (x - 1) + '" y="' + (y0 + 3.5) + '" width="2" height="6" fill="#fff" stroke="' + c + '" stroke-width="1"/>';
      case 'block': return '<rect ' + attrs + ' x="' + (x - 3) + '" y="' + (y0 + 5) + '" width="6" height="' + (h - 10) + '" rx="1" fill="' + c + '"/>';
      case 'diamond': return '<path ' + attrs + ' d="M' + x + ' ' + (y0 + 5) + 'L' + (x + 5.5) + ' ' + cy + 'L' + x + ' ' + (y0 + h - 5) + 'L' + (x - 5.5) + ' ' + cy + 'Z" fill="' + c + '"/>';
      case 'square': return '<rect ' + attrs + ' x="' + (x - 3.5) + '" y="' + (cy - 3.5) + '" width="7" height="7" fill="#fff" stroke="' + c + '" stroke-width="1.5"/>';
      case 'dot': return '<circle ' + attrs + ' cx="' + x + '" cy="' + cy + '" r="3" fill="' + c + '"/>';
      case 'ring': return '<g ' + attrs + '><circle cx="' + x + '" cy="' + cy + '" r="6" fill="none" stroke="' + c + '" stroke-width="1.5"/><rect x="' + (x - 1.5) + '" y="' + (y0 + 5) + '" width="3" height="' + (h - 10) + '" fill="' + c + '"/></g>';
      case 'x': return '<path ' + attrs + ' d="M' + (x - 5) + ' ' + (cy - 5) + 'L' + (x + 5) + ' ' + (cy + 5) + 'M' + (x + 5) + ' ' + (cy - 5) + 'L' + (x - 5) + ' ' + (cy + 5) + '" stroke="' + c + '" stroke-width="2.5" fill="none"/>';
      case 'open': return '<path ' + attrs + ' d="M' + (x + 3) + ' ' + (y0 + 4) + 'L' + x + ' ' + (y0 + 4) + 'L' + x + ' ' + (y0 + h - 4) + 'L' + (x + 3) + ' ' + (y0 + h - 4) + '" stroke="' + c + '" stroke-width="2" fill="none"/>';
      case 'close': return '<path ' + attrs + ' d="M' + (x - 3) + ' ' + (y0 + 4) + 'L' + x + ' ' + (y0 + 4) + 'L' + x + ' ' + (y0 + h - 4) + 'L' + (x - 3) + ' ' + (y0 + h - 4) + '" stroke="' + c + '" stroke-width="2" fill="none"/>';
      case 'step': return '<rect ' + attrs + ' x="' + (x - 1.5) + '" y="' + (y0 + 3) + '" width="3" height="' + (h - 6) + '" rx="1" fill="' + c + '"/>';
    }
    return '<rect ' + attrs + ' x="' + (x - 1.5) + '" y="' + (y0 + 5) + '" width="3" height="' + (h - 10) + '" fill="' + c + '"/>';
  }
  // lower returns the first index in sorted lane records with x >= u.
  function lower(arr, u) {
    var lo = 0, hi = arr.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (xOf(arr[mid]) < u) lo = mid + 1; else hi = mid; }
    return lo;
  }
  var stats = { marks: 0, ms: 0 };
  function render() {
    var t0 = performance.now();
    var vw = viewW(), sl = scroller.scrollLeft, k = st.k;
    var u0 = (sl - PAD - 40) / k, u1 = (sl + vw - PAD + 40) / k;
    function px(u) { return u * k + PAD - sl; }
    svg.setAttribute('width', vw);
    var out = [], marks = 0;
    clusters = [];
    // rows background
    rows.forEach(function (row) {
      var y0 = AXIS_H + row.y;
      if (row.type === 'group') out.push('<rect x="0" y="' + y0 + '" width="' + vw + '" height="' + row.h + '" fill="#f3f5f7"/><line x1="0" x2="' + vw + '" y1="' + y0 + '" y2="' + y0 + '" stroke="#eaeef2"/>');
      else if (row.lane.i % 2 === 1) out.push('<rect x="0" y="' + y0 + '" width="' + vw + '" height="' + row.h + '" fill="#fafbfc"/>');
    });
    // axis
    var tickTarget = 110, raw = tickTarget / k, p10 = Math.pow(10, Math.floor(Math.log10(raw))), step = p10;
    [1, 2, 5, 10].some(function (m) { step = m * p10; return step >= raw; });
    if (st.mode === 'order') step = Math.max(1, Math.round(step));
    var ax = ['<g class="axis"><rect x="0" y="0" width="' + vw + '" height="' + AXIS_H + '" fill="#fff"/><line x1="0" x2="' + vw + '" y1="' + AXIS_H + '" y2="' + AXIS_H + '" stroke="#d0d7de"/>'];
    for (var u = Math.max(0, Math.floor(u0 / step) * step); u <= u1 && u <= span(); u += step) {
      var x = px(u);
      ax.push('<line x1="' + x + '" x2="' + x + '" y1="' + (AXIS_H - 6) + '" y2="' + (AXIS_H + LANES_H) + '" stroke="#eaeef2"/>');
      var edge = x > vw - 44;
      ax.push('<text x="' + (edge ? x - 3 : x + 3) + '" y="' + (AXIS_H - 9) + '"' + (edge ? ' text-anchor="end"' : '') + '>' + (st.mode === 'time' ? fmtStep(Math.round(u)) : '#' + Math.round(u)) + '</text>');
    }
    ax.push('</g>');
    out.push(ax.join(''));
    // lanes
    lanes.forEach(function (l) {
      var y0 = AXIS_H + l.y, parts = ['<g class="lane" data-lane="' + l.i + '">'];
      l.spans.forEach(function (sp) {
        var xa = px(xOf(sp.a)), xb = sp.b ? px(xOf(sp.b)) : px(span());
        if (xb < -10 || xa > vw + 10) return;
        if (l.style === 'watch') {
          parts.push('<rect x="' + xa + '" y="' + (y0 + 3) + '" width="' + Math.max(xb - xa, 1) + '" height="' + (ROW_H - 6) + '" fill="#e6f0fb" rx="2"/>');
          var id = (sp.w || '').split('#')[1];
          if (id && xb - xa > 30) parts.push('<text class="wlabel" x="' + (Math.max(xa, 0) + 5) + '" y="' + (y0 + ROW_H - 6) + '">#' + esc(id) + '</text>');
        } else {
          parts.push('<rect x="' + xa + '" y="' + (y0 + 2) + '" width="' + Math.max(xb - xa, 1) + '" height="' + (ROW_H - 4) + '" fill="url(#hatch)"/>');
        }
      });
      if (l.style === 'signal') {
        parts.push(signalPath(l, y0, px, vw));
      }
      var a = lower(l.recs, u0), b = lower(l.recs, u1);
      var bin = null;
      function flush() {
        if (!bin) return;
        var r = bin.best, x = px(xOf(r));
        if (bin.n === 1) {
          if (l.style !== 'signal' || r.kind !== 'signal') parts.push(markSVG(r.st.sh, x, y0, r.st.c, 'class="mark" data-i="' + r.i + '"'));
          else parts.push('<circle class="mark" data-i="' + r.i + '" cx="' + x + '" cy="' + (y0 + (r.value ? 5 : ROW_H - 5)) + '" r="3" fill="' + COLORS.purple + '"/>');
          if (l.label === 'plan steps' && bin.gap > 50) {
            var full = r.stepText || r.detail || r.op, txt = full, n = Math.floor((bin.gap - 12) / 6.2);
            if (txt.length > n) txt = txt.slice(0, Math.max(n - 1, 1)) + '…';
            // A cut label keeps its whole text as the hover title (zoom in to read it in place).
            parts.push('<text class="steplabel" x="' + (x + 5) + '" y="' + (y0 + ROW_H / 2 + 4) + '"><title>' + esc(full) + '</title>' + esc(txt) + '</text>');
          }
        } else {
          var xa = px(xOf(bin.first)), xb = px(xOf(bin.last)), w = Math.max(xb - xa, 0) + 5;
          clusters.push(bin.items);
          parts.push('<rect class="mark cluster" data-c="' + (clusters.length - 1) + '" x="' + (xa - 2.5) + '" y="' + (y0 + 4) + '" width="' + w + '" height="' + (ROW_H - 8) + '" rx="1.5" fill="' + r.st.c + '" stroke="rgba(31,35,40,0.45)" stroke-width="1"/>');
        }
        marks++;
      }
      for (var j = a; j < b; j++) {
        var r = l.recs[j], xr = px(xOf(r)), cell = Math.floor(xr / BIN);
        if (bin && (cell - bin.cell) * BIN < BIN) {
          bin.n++; bin.items.push(r.i); bin.last = r;
          if (r.st.p > bin.best.st.p) bin.best = r;
        } else {
          if (bin) { bin.gap = xr - px(xOf(bin.last)); flush(); }
          bin = { cell: cell, n: 1, items: [r.i], best: r, first: r, last: r, gap: 1e9 };
        }
      }
      if (bin) { if (b < l.recs.length) bin.gap = px(xOf(l.recs[b])) - px(xOf(bin.last)); flush(); }
      parts.push('</g>');
      out.push(parts.join(''));
    });
    // highlights: evidence, first failure, selection
    var H = AXIS_H + LANES_H;
    st.hlList.forEach(function (i) {
      var x = px(xOf(recs[i]));
      if (x < -5 || x > vw + 5) return;
      out.push('<line class="hl" x1="' + x + '" x2="' + x + '" y1="' + AXIS_H + '" y2="' + H + '" stroke="#e3a008" stroke-width="2" opacity="0.75"/>');
      var l = lanes[recs[i].lane];
      if (l) out.push('<circle cx="' + x + '" cy="' + (AXIS_H + l.y + ROW_H / 2) + '" r="8" fill="none" stroke="#e3a008" stroke-width="2.5"/>');
    });
    if (st.failure >= 0) {
      var xf = px(xOf(recs[st.failure]));
      if (xf > -5 && xf < vw + 5) {
        out.push('<line class="failure-line" x1="' + xf + '" x2="' + xf + '" y1="' + (AXIS_H - 6) + '" y2="' + H + '" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="5 3"/>');
        var right = xf > vw - 90, ly = AXIS_H + (rows.length ? rows[0].h : ROW_H) - 7;
        out.push('<text x="' + (right ? xf - 5 : xf + 5) + '" y="' + ly + '" text-anchor="' + (right ? 'end' : 'start') + '" style="fill:#cf222e;font-weight:600">first failure</text>');
      }
    }
    if (st.sel >= 0) {
      var xs = px(xOf(recs[st.sel]));
      if (xs > -5 && xs < vw + 5) {
        out.push('<line class="sel" x1="' + xs + '" x2="' + xs + '" y1="' + AXIS_H + '" y2="' + H + '" stroke="#0969da" stroke-width="1.5"/>');
        var ls = lanes[recs[st.sel].lane];
        if (ls) out.push('<circle cx="' + xs + '" cy="' + (AXIS_H + ls.y + ROW_H / 2) + '" r="9" fill="none" stroke="#0969da" stroke-width="2.5"/>');
      }
    }
    svg.innerHTML = '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff0f0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#f4b4b4" stroke-width="2.5"/></pattern></defs>' + out.join('');
    stats.marks = marks;
    stats.ms = performance.now() - t0;
    tl.setAttribute('data-marks', marks);
    var z = st.k / fitK();
    $('zoom-label').textContent = (st.mode === 'time' ? 'virtual time' : 'trace order') + ' · zoom ×' + (z < 10 ? z.toFixed(1) : Math.round(z));
  }
  // signalPath draws a sync signal as a step line: high while true.
  function signalPath(l, y0, px, vw) {
    var hi = y0 + 5, lo = y0 + ROW_H - 5, pts = l.recs.filter(function (r) { return r.kind === 'signal' || r.kind === 'desired'; });
    if (!pts.length) return '';
    var x0 = px(xOf(pts[0])), out = '<line x1="' + Math.max(px(0), -10) + '" x2="' + x0 + '" y1="' + lo + '" y2="' + lo + '" stroke="#afb8c1" stroke-dasharray="2 3"/>';
    var d = '', fill = '', cur = null, xprev = x0;
    pts.forEach(function (r) {
      var x = Math.min(Math.max(px(xOf(r)), -10), vw + 10), yv = r.value ? hi : lo;
      if (cur === null) d = 'M' + x + ' ' + yv;
      else {
        d += 'L' + x + ' ' + (cur ? hi : lo) + 'L' + x + ' ' + yv;
        if (cur) fill += '<rect x="' + xprev + '" y="' + hi + '" width="' + Math.max(x - xprev, 0) + '" height="' + (lo - hi) + '" fill="#8250df" opacity="0.12"/>';
      }
      cur = r.value; xprev = x;
    });
    var xe = Math.min(px(span()), vw + 10);
    d += 'L' + xe + ' ' + (cur ? hi : lo);
    if (cur) fill += '<rect x="' + xprev + '" y="' + hi + '" width="' + Math.max(xe - xprev, 0) + '" height="' + (lo - hi) + '" fill="#8250df" opacity="0.12"/>';
    return out + fill + '<path d="' + d + '" stroke="#8250df" stroke-width="2" fill="none"/>';
  }

  var pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  }
  scroller.addEventListener('scroll', schedule, { passive: true });
  window.addEventListener('resize', function () { setK(st.k); });
  scroller.addEventListener('wheel', function (e) {
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    var rect = scroller.getBoundingClientRect();
    setK(st.k * Math.pow(1.0015, -e.deltaY), e.clientX - rect.left);
  }, { passive: false });
  // drag to scroll
  var drag = null;
  scroller.addEventListener('mousedown', function (e) {
    if (e.button !== 0) return;
    drag = { x: e.clientX, sl: scroller.scrollLeft, moved: false };
  });
  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x;
    if (Math.abs(dx) > 3) { drag.moved = true; scroller.classList.add('dragging'); }
    if (drag.moved) scroller.scrollLeft = drag.sl - dx;
  });
  window.addEventListener('mouseup', function () {
    if (drag) setTimeout(function () { drag = null; }, 0);
    scroller.classList.remove('dragging');
  });
  $('zoom-in').onclick = function () { setK(st.k * 2); };
  $('zoom-out').onclick = function () { setK(st.k / 2); };
  $('zoom-fit').onclick = function () { setK(fitK()); };
  function setMode(m) {
    var center = st.sel >= 0 ? recs[st.sel] : null;
    st.mode = m;
    $('mode-time').classList.toggle('active', m === 'time');
    $('mode-order').classList.toggle('active', m === 'order');
    lanes.forEach(function (l) { l.recs.sort(function (a, b) { return xOf(a) - xOf(b) || a.i - b.i; }); });
    st.k = fitK();
    setK(st.k);
    if (center && st.k > fitK() * 1.01) { centerOn(center); render(); }
  }
  $('mode-time').onclick = function () { setMode('time'); };
  $('mode-order').onclick = function () { setMode('order'); };

  // tooltip and click
  var tip = $('tooltip');
  svg.addEventListener('mousemove', function (e) {
    var m = e.target.closest ? e.target.closest('.mark') : null;
    if (!m) { tip.hidden = true; return; }
    var h;
    if (m.hasAttribute('data-c')) {
      var items = clusters[+m.getAttribute('data-c')] || [];
      h = '<div class="tt-head">' + items.length + ' records · ' + (st.mode === 'time' ? fmtTime(recs[items[0]].t) : '#' + recs[items[0]].pos) + ' · click to list, zoom in to separate</div>';
      items.slice(0, 8).forEach(function (i) { h += '<div class="tt-line">#' + recs[i].pos + ' ' + esc(recs[i].text) + '</div>'; });
      if (items.length > 8) h += '<div class="tt-head">… ' + (items.length - 8) + ' more</div>';
    } else {
      var r = recs[+m.getAttribute('data-i')];
      h = '<div class="tt-head">#' + r.pos + ' · ' + fmtTime(r.t) + ' · ' + esc(r.kind) + ' · ' + esc(r.actor) + '</div><div class="tt-line">' + esc(r.text) + '</div>';
    }
    tip.innerHTML = h;
    tip.hidden = false;
    var x = e.clientX + 14, yy = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth - 8) x = e.clientX - tip.offsetWidth - 10;
    if (yy + tip.offsetHeight > window.innerHeight - 8) yy = e.clientY - tip.offsetHeight - 10;
    tip.style.left = x + 'px';
    tip.style.top = yy + 'px';
  });
  svg.addEventListener('mouseleave', function () { tip.hidden = true; });
  svg.addEventListener('click', function (e) {
    if (drag && drag.moved) return;
    var m = e.target.closest ? e.target.closest('.mark') : null;
    if (!m) return;
    if (m.hasAttribute('data-c')) showCluster(clusters[+m.getAttribute('data-c')] || []);
    else select(+m.getAttribute('data-i'), { table: true });
  });

  // ---- details -----------------------------------------------------------
  var details = $('details');
  var FIELDS = ['actor', 'verb', 'resource', 'ns', 'name', 'uid', 'rv', 'oldUID', 'oldRV', 'owner', 'byGC', 'code', 'reason', 'lag', 'count', 'watcher', 'watchList', 'event', 'initial', 'tombstone', 'handler', 'signal', 'value', 'op', 'key', 'result', 'step', 'fault', 'breaking', 'detail'];
  // cause finds the write a delivered event or handler call reflects.
  var writeByRV = {};
  recs.forEach(function (r) { if (r.kind === 'write' && r.rv) writeByRV[r.rv + ' ' + r.name] = r.i; });
  function detailsHTML(r) {
    var h = '<h3><span class="k">' + esc(r.kind) + '</span> #' + r.pos + ' <span class="t">t = ' + fmtTime(r.t) + '</span>';
    if (st.hl[r.i]) h += '<span class="badge unknown">evidence</span>';
    h += '<span class="actions"><button type="button" class="btn btn-sm" data-act="prev">← prev</button><button type="button" class="btn btn-sm" data-act="next">next →</button><button type="button" class="btn btn-sm" data-act="table">show in trace</button></span></h3>';
    h += '<p class="summary">' + esc(r.text) + '</p><dl class="kv">';
    FIELDS.forEach(function (f) {
      var v = r[f];
      if (v === '' || v === 0 || v === false || v === null || v === undefined) return;
      if (f === 'value' && r.kind !== 'signal' && r.kind !== 'desired') return;
      h += '<dt>' + f + '</dt><dd>' + esc(v) + '</dd>';
    });
    if ((r.kind === 'signal' || r.kind === 'desired') && !r.value) h += '<dt>value</dt><dd>false</dd>';
    var c = writeByRV[r.rv + ' ' + r.name];
    if (r.kind !== 'write' && c !== undefined) h += '<dt>written at</dt><dd><a href="#rec-' + recs[c].pos + '" data-goto="' + c + '">#' + recs[c].pos + '</a> (' + esc(recs[c].verb) + ' by ' + esc(recs[c].actor) + ')</dd>';
    h += '</dl>';
    if (r.object) h += '<pre class="obj">' + esc(JSON.stringify(r.object, null, 2)) + '</pre>';
    if (r.objects) {
      h += '<table class="objs"><tr><th>resource</th><th>object</th><th>uid</th><th>rv</th><th></th></tr>';
      r.objects.forEach(function (oi) {
        var o = obj(oi);
        h += '<tr><td>' + esc(shortRes(o.resource)) + '</td><td>' + esc(objName(o)) + '</td><td>' + esc(o.uid) + '</td><td>' + o.rv + '</td><td>' + (o.terminating ? 'terminating ' : '') + esc(o.finalizers) + '</td></tr>';
      });
      h += '</table>';
    }
    return h;
  }
  function showCluster(items) {
    var h = '<h3>' + items.length + ' records close together <span class="t">zoom in or switch to "order" to separate them</span></h3><dl class="kv">';
    items.slice(0, 200).forEach(function (i) { h += '<dt><a href="#rec-' + recs[i].pos + '" data-goto="' + i + '">#' + recs[i].pos + '</a></dt><dd>' + esc(recs[i].text) + '</dd>'; });
    details.innerHTML = h + '</dl>';
  }
  details.addEventListener('click', function (e) {
    var g = e.target.closest('[data-goto]');
    if (g) { e.preventDefault(); select(+g.getAttribute('data-goto'), { center: true, table: true }); return; }
    var a = e.target.closest('[data-act]');
    if (!a || st.sel < 0) return;
    var act = a.getAttribute('data-act');
    if (act === 'prev' && st.sel > 0) select(st.sel - 1, { center: true, table: true });
    if (act === 'next' && st.sel < recs.length - 1) select(st.sel + 1, { center: true, table: true });
    if (act === 'table') { select(st.sel, { table: true }); $('trace-card').scrollIntoView({ behavior: 'smooth', block: 'start' }); }
  });
  function select(i, opt) {
    if (i < 0 || i >= recs.length) return;
    opt = opt || {};
    st.sel = i;
    details.innerHTML = detailsHTML(recs[i]);
    if (opt.center) {
      var x = xOf(recs[i]) * st.k + PAD - scroller.scrollLeft;
      if (x < 30 || x > viewW() - 30) centerOn(recs[i]);
    }
    render();
    if (opt.table) tableShow(i);
    else tableRender();
  }
  document.addEventListener('keydown', function (e) {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT' || st.sel < 0) return;
    if (e.key === 'ArrowRight' && st.sel < recs.length - 1) { select(st.sel + 1, { center: true, table: true }); e.preventDefault(); }
    if (e.key === 'ArrowLeft' && st.sel > 0) { select(st.sel - 1, { center: true, table: true }); e.preventDefault(); }
  });

  // ---- verdict links -----------------------------------------------------
  function highlight(vi) {
    st.hl = {};
    st.hlList = [];
    var v = D.verdicts[vi];
    if (v) v.pos.forEach(function (p) { var i = byPos[p]; if (i !== undefined && !st.hl[i]) { st.hl[i] = true; st.hlList.push(i); } });
    document.querySelectorAll('.verdict').forEach(function (el) { el.classList.toggle('active', el.id === 'verdict-' + vi); });
  }
  function jump(pos, vi) {
    var i = byPos[pos];
    if (i === undefined) return;
    if (vi !== null && vi !== undefined) highlight(vi);
    select(i, { center: true, table: true });
    centerOn(recs[i]);
    render();
    $('timeline-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
  }
  document.querySelectorAll('.poslink').forEach(function (a) {
    a.addEventListener('click', function (e) {
      e.preventDefault();
      var vi = a.getAttribute('data-verdict');
      jump(+a.getAttribute('data-pos'), vi === null ? null : +vi);
      history.replaceState(null, '', '#rec-' + a.getAttribute('data-pos'));
    });
  });
  document.querySelectorAll('.show-all').forEach(function (b) {
    b.addEventListener('click', function () {
      var vi = +b.getAttribute('data-verdict');
      highlight(vi);
      if (st.hlList.length) {
        var xs = st.hlList.map(function (i) { return xOf(recs[i]); });
        var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs), w = Math.max(hi - lo, span() / 200);
        setK((viewW() - 2 * PAD) / (w * 1.3));
        scroller.scrollLeft = (lo - w * 0.15) * st.k;
        select(st.hlList[0], { table: true });
      }
      $('filter-evidence').checked = true;
      applyFilter();
      $('timeline-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
    });
  });
  var copy = $('copy-replay');
  if (copy) copy.onclick = function () {
    var text = $('replay-cmd').textContent;
    function done() { copy.textContent = 'Copied'; setTimeout(function () { copy.textContent = 'Copy'; }, 1500); }
    function fallback() {
      var range = document.createRange();
      range.selectNodeContents($('replay-cmd'));
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      try { document.execCommand('copy'); done(); } catch (e) { copy.textContent = 'Press Ctrl+C'; }
    }
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  };

  // ---- trace table -------------------------------------------------------
  var TROW = 24, body = $('trace-body'), tspacer = $('trace-spacer');
  var filtered = recs.map(function (r) { return r.i; });
  var rowOf = {};
  recs.forEach(function (r) { r.search = ('#' + r.pos + ' ' + r.kind + ' ' + r.actor + ' ' + r.text + ' ' + r.uid + ' ' + r.watcher + ' ' + r.reason + ' ' + r.detail).toLowerCase(); });
  var kinds = {}, actors = {};
  recs.forEach(function (r) { kinds[r.kind] = (kinds[r.kind] || 0) + 1; if (r.actor) actors[r.actor] = (actors[r.actor] || 0) + 1; });
  Object.keys(kinds).sort().forEach(function (k) { $('filter-kind').insertAdjacentHTML('beforeend', '<option value="' + esc(k) + '">' + esc(k) + ' (' + kinds[k] + ')</option>'); });
  Object.keys(actors).sort().forEach(function (a) { $('filter-actor').insertAdjacentHTML('beforeend', '<option value="' + esc(a) + '">' + esc(a) + ' (' + actors[a] + ')</option>'); });
  function applyFilter() {
    var q = $('filter-text').value.trim().toLowerCase(), kd = $('filter-kind').value, ac = $('filter-actor').value, ev = $('filter-evidence').checked;
    var words = q ? q.split(/\s+/) : [];
    filtered = [];
    recs.forEach(function (r) {
      if (kd && r.kind !== kd) return;
      if (ac && r.actor !== ac) return;
      if (ev && !st.hl[r.i] && r.i !== st.failure) return;
      for (var w = 0; w < words.length; w++) if (r.search.indexOf(words[w]) < 0) return;
      filtered.push(r.i);
    });
    rowOf = {};
    filtered.forEach(function (i, n) { rowOf[i] = n; });
    tspacer.style.height = filtered.length * TROW + 'px';
    $('filter-count').textContent = filtered.length === recs.length ? recs.length + ' records' : filtered.length + ' of ' + recs.length + ' records';
    tableRender();
  }
  var filterTimer = null;
  $('filter-text').addEventListener('input', function () { clearTimeout(filterTimer); filterTimer = setTimeout(applyFilter, 120); });
  ['filter-kind', 'filter-actor', 'filter-evidence'].forEach(function (id) { $(id).addEventListener('change', applyFilter); });
  function tableRender() {
    var top = body.scrollTop, h = body.clientHeight || 360;
    var a = Math.max(0, Math.floor(top / TROW) - 5), b = Math.min(filtered.length, Math.ceil((top + h) / TROW) + 5);
    var html = '';
    for (var n = a; n < b; n++) {
      var r = recs[filtered[n]];
      var cls = 'trow' + (st.hl[r.i] ? ' ev' : '') + (r.i === st.sel ? ' sel' : '');
      html += '<div class="' + cls + '" role="row" data-i="' + r.i + '" style="top:' + (n * TROW) + 'px"><span>#' + r.pos + '</span><span>' + fmtTime(r.t) + '</span><span class="kd kd-' + esc(r.kind) + '">' + esc(r.kind) + '</span><span>' + esc(r.actor) + '</span><span title="' + esc(r.text) + '">' + esc(r.text) + '</span></div>';
    }
    tspacer.innerHTML = html;
  }
  function tableShow(i) {
    if (rowOf[i] === undefined) { $('filter-text').value = ''; $('filter-kind').value = ''; $('filter-actor').value = ''; $('filter-evidence').checked = false; applyFilter(); }
    var n = rowOf[i];
    if (n !== undefined) {
      var top = n * TROW, h = body.clientHeight || 360;
      if (top < body.scrollTop || top > body.scrollTop + h - TROW) body.scrollTop = Math.max(0, top - h / 2);
    }
    tableRender();
  }
  var tpending = false;
  body.addEventListener('scroll', function () {
    if (tpending) return;
    tpending = true;
    requestAnimationFrame(function () { tpending = false; tableRender(); });
  }, { passive: true });
  body.addEventListener('click', function (e) {
    var row = e.target.closest('.trow');
    if (row) select(+row.getAttribute('data-i'), { center: true });
  });

  // ---- first render ------------------------------------------------------
  $('mode-' + st.mode).classList.add('active');
  lanes.forEach(function (l) { l.recs.sort(function (a, b) { return xOf(a) - xOf(b) || a.i - b.i; }); });
  st.k = fitK();
  spacer.style.width = (span() * st.k + 2 * PAD) + 'px';
  var firstFail = -1;
  D.verdicts.forEach(function (v, vi) { if (firstFail < 0 && v.status === 'fail' && v.pos.length) firstFail = vi; });
  if (firstFail >= 0) highlight(firstFail);
  render();
  applyFilter();
  var m = /^#rec-(\d+)$/.exec(location.hash);
  if (m && byPos[+m[1]] !== undefined) select(byPos[+m[1]], { center: true, table: true });
  else if (st.failure >= 0) select(st.failure, { table: true }); // show the failure's record first
  tl.setAttribute('data-lanes', lanes.length);
  tl.setAttribute('data-records', recs.length);
  tl.setAttribute('data-render-ms', stats.ms.toFixed(1));
  tl.setAttribute('data-script-ms', (performance.now() - T0).toFixed(1));
  tl.setAttribute('data-open-ms', performance.now().toFixed(1));
  tl.setAttribute('data-state', 'rendered');
})();
