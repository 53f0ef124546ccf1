"""The report page's inline CSS and JS (sorting, the filter box, print)."""

CSS = """
:root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7fb;--accent:#4f46e5}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 28px 60px}
header h1{margin:0;font-size:26px;letter-spacing:-.01em}
.sub{margin:4px 0 20px;color:var(--muted)}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef0f6;padding:1px 4px;
border-radius:4px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(140px,1fr));gap:12px;margin-bottom:22px}
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:14px 16px;
box-shadow:0 1px 2px rgba(0,0,0,.04)}
.card .big{font-size:24px;font-weight:650;color:var(--accent)}
.card .label{font-weight:600}
.card .note{color:var(--muted);font-size:12px}
section{background:#fff;border:1px solid var(--line);border-radius:12px;padding:18px 22px;margin:0 0 20px;
box-shadow:0 1px 2px rgba(0,0,0,.04)}
section.cards{background:none;border:0;box-shadow:none;padding:0}
h2{margin:0 0 4px;font-size:18px}
.intro{margin:0 0 12px;color:var(--muted)}
figure{margin:6px 0 14px}
svg.chart{display:block;max-width:100%;height:auto}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:#374151}
svg text.group{font-weight:650;font-size:13px;fill:#111827}
svg text.axis,svg text.muted,.muted{fill:#9ca3af;color:#8b919c}
svg text.val{fill:#111827;font-variant-numeric:tabular-nums}
svg line.grid{stroke:#eceef4;stroke-width:1}
svg line.sep{stroke:#f1f2f6;stroke-width:1}
.scroll{max-height:460px;overflow:auto;border:1px solid var(--line);border-radius:8px;margin:10px 0}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 10px;border-bottom:1px solid #f0f1f5;text-align:left;white-space:nowrap}
th{position:sticky;top:0;background:#f9fafb;font-weight:600;cursor:pointer;user-select:none}
th:hover{background:#eef0f8}
th.asc::after{content:" \\25B2";font-size:10px;color:var(--accent)}
th.desc::after{content:" \\25BC";font-size:10px;color:var(--accent)}
td.num{text-align:right}
tbody tr:nth-child(even){background:#fbfbfd}
tbody tr:hover{background:#f1f2fb}
td:first-child{white-space:normal;overflow-wrap:break-word;min-width:180px}
h3{margin:16px 0 0;font-size:14px;color:#374151}
#t-keys td:first-child{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:normal}
ul.plain{list-style:none;padding:0;margin:0}
ul.plain li{padding:4px 0}
ul.keys li.add code{background:#dcfce7}
ul.keys li.del code{background:#fee2e2}
.detail{margin:6px 0 4px 46px;color:#4b5563}
.detail ul{margin:2px 0 0;padding-left:18px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600}
.badge.ok{background:#dcfce7;color:#166534}
.badge.over{background:#fee2e2;color:#991b1b}
.action{border:2px solid var(--line)}
.action.bad{border-color:#dc2626}
.action ul{list-style:none;padding:0;margin:0}
.action li{padding:5px 0;border-bottom:1px solid #f3f4f6}
.action li:last-child{border-bottom:0}
.over-text,.bad-text{color:#b91c1c;font-weight:650}
.ok-text{color:#15803d;font-weight:600}
.prov{color:var(--muted);font-size:12.5px;margin:-12px 0 18px}
.prov code{font-size:11.5px}
#filter-box{position:sticky;top:0;z-index:5;background:var(--bg);padding:8px 0 10px;margin-bottom:8px}
#filter{width:100%;max-width:520px;padding:8px 10px;font:inherit;border:1px solid #c7cbd6;border-radius:8px}
#filter-count{margin-left:10px;color:var(--muted)}
.key{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:normal;word-break:normal}
td:first-child .key,td .key{white-space:normal}
.explain{border-top:1px solid var(--line);padding:10px 0}
.explain h3{margin:0 0 4px;font-size:13px}
.explain ul{margin:4px 0 0;padding-left:18px}
.history{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:12px}
.hidden-by-filter{display:none}
li,p,h3{overflow-wrap:break-word}
@media (max-width:640px){main{padding:14px 10px 40px}section{padding:14px 12px}
.card .big{font-size:20px}th,td{padding:5px 6px}td:first-child{min-width:120px}
.detail{margin-left:12px}.explain ul,.detail ul{padding-left:14px}
figure.wide{overflow-x:auto}figure.wide svg.chart{min-width:640px}}
@media print{
body{background:#fff;font-size:11px}main{max-width:none;padding:0}
#filter-box{display:none}
section{box-shadow:none;border:0;padding:0;margin:0 0 14px;break-inside:auto}
.scroll{max-height:none!important;overflow:visible!important;border:0}
th{position:static}tr{break-inside:avoid}
tr.hidden-by-filter{display:table-row}.explain.hidden-by-filter{display:block}
figure.wide svg.chart{min-width:0}
section.action{padding:8px 12px}h2,h3{break-after:avoid}
}
"""

JS = """
(function(){
  function value(row, col){
    var cell = row.children[col];
    if (!cell) return '';
    var v = cell.getAttribute('data-v');
    return v === null ? cell.textContent.toLowerCase() : parseFloat(v);
  }
  function sortTable(table, col, dir){
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function(a, b){
      var x = value(a, col), y = value(b, col);
      var c = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
      return dir === 'asc' ? c : -c;
    });
    rows.forEach(function(r){ body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function(th, i){
      th.classList.remove('asc', 'desc');
      if (i === col) th.classList.add(dir);
    });
    table.setAttribute('data-sorted', col + ':' + dir);
  }
  function columnIndex(table, name){
    var cells = table.tHead.rows[0].cells;
    for (var i = 0; i < cells.length; i++) {
      if (cells[i].textContent.trim().toLowerCase() === name.toLowerCase() || String(i) === name) return i;
    }
    return -1;
  }
  document.querySelectorAll('table.sortable').forEach(function(table){
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function(th, i){
      th.addEventListener('click', function(){
        var numeric = table.tBodies[0].rows.length && table.tBodies[0].rows[0].children[i].hasAttribute('data-v');
        var dir = th.classList.contains('desc') ? 'asc' : th.classList.contains('asc') ? 'desc' :
                  (numeric ? 'desc' : 'asc');
        sortTable(table, i, dir);
      });
    });
  });
  var filter = document.getElementById('filter');
  if (filter) {
    filter.addEventListener('input', function(){
      var q = filter.value.trim().toLowerCase(), shown = 0, total = 0;
      document.querySelectorAll('table.sortable tbody tr, .explain').forEach(function(row){
        var hit = !q || row.textContent.toLowerCase().indexOf(q) >= 0;
        row.classList.toggle('hidden-by-filter', !hit);
        if (row.tagName === 'TR') { total++; if (hit) shown++; }
      });
      document.getElementById('filter-count').textContent = q ? shown + ' of ' + total + ' rows' : '';
    });
  }
  var m = /#sort=([^:&]+):([^:&]+)(?::(asc|desc))?/.exec(decodeURIComponent(location.hash));
  if (m) {
    var table = document.getElementById('t-' + m[1]);
    if (table) {
      var col = columnIndex(table, m[2]);
      if (col >= 0) sortTable(table, col, m[3] || 'desc');
    }
  }
})();
"""
