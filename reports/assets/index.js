// cachelab index: sortable tables and a filter. No dependencies.
(function () {
  'use strict';
  var RANK = { fail: 0, unsound: 1, unknown: 2, sound: 3, pass: 3, 'n/a': 3, '': 4 };
  function key(td, type) {
    if (!td) return '';
    if (type === 'status') return RANK[td.getAttribute('data-v') || ''];
    if (type === 'num') { var n = parseFloat(td.textContent); return isNaN(n) ? -Infinity : n; }
    return td.textContent.trim().toLowerCase();
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var ths = table.querySelectorAll('thead th');
    ths.forEach(function (th, col) {
      var type = th.getAttribute('data-type');
      if (!type) return;
      th.addEventListener('click', function () {
        var asc = !th.classList.contains('asc');
        ths.forEach(function (h) { h.classList.remove('asc', 'desc'); });
        th.classList.add(asc ? 'asc' : 'desc');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.forEach(function (r, i) { r._i = i; });
        rows.sort(function (a, b) {
          var x = key(a.cells[col], type), y = key(b.cells[col], type);
          var c = type === 'text' ? x.localeCompare(y, undefined, { numeric: true }) : (x < y ? -1 : x > y ? 1 : 0);
          if (c === 0) c = a._i - b._i;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var f = document.getElementById('filter'), table = document.getElementById('run-table'), count = document.getElementById('count');
  function apply() {
    var words = f.value.trim().toLowerCase().split(/\s+/).filter(Boolean), shown = 0, rows = table.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      var t = rows[i].textContent.toLowerCase(), ok = words.every(function (w) { return t.indexOf(w) >= 0; });
      rows[i].hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = shown === rows.length ? rows.length + ' runs' : shown + ' of ' + rows.length + ' runs';
  }
  if (f && table) { f.addEventListener('input', apply); apply(); }
})();
