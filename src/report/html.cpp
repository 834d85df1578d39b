// The interactive chart: one self-contained HTML file (inline CSS and JS, the
// data as embedded JSON, nothing fetched), drawn in the browser from the same
// layout as the SVG. Hovering a point shows its numbers; the legend toggles
// series and roofs. When drawing ends the page sets body[data-rendered] to
// the number of points drawn and fills #chart-status (tests read both).
#include <string>

#include "roofline/core/json_text.hpp"
#include "roofline/report/chart.hpp"
#include "src/report/style.hpp"

namespace roofline::report {

namespace {

// JSON inside <script>: no "<" may appear raw (it could close the element).
std::string script_safe(const std::string& json) {
  std::string o;
  for (char c : json) {
    if (c == '<') o += "\\u003c";
    else if (c == '>') o += "\\u003e";
    else if (c == '&') o += "\\u0026";
    else o += c;
  }
  return o;
}

const char* kPageCss = R"css(
body{font-family:sans-serif;margin:16px;color:#222}
#wrap{display:flex;gap:16px;align-items:flex-start}
#legend{font-size:13px;min-width:220px}
#legend label{display:block;margin:3px 0;cursor:pointer}
#legend .swatch{display:inline-block;width:10px;height:10px;border-radius:5px;margin:0 6px 0 2px}
#legend .line{display:inline-block;width:18px;border-top:2px solid;margin:0 6px 3px 2px}
#tip{position:absolute;display:none;background:#fff;border:1px solid #999;border-radius:4px;padding:6px 8px;
     font-size:12px;pointer-events:none;box-shadow:0 2px 6px rgba(0,0,0,.2);max-width:420px}
#tip table{border-collapse:collapse}#tip td{padding:1px 6px 1px 0;vertical-align:top}
#tip td:first-child{color:#666}
#chart-status{font-size:12px;color:#666;margin-top:6px}
.pt{cursor:pointer}.pt:hover{stroke:#000;stroke-width:2}
)css";

const char* kScript = R"js(
(function () {
  var status = document.getElementById('chart-status');
  try {
    var data = JSON.parse(document.getElementById('chart-data').textContent);
    var W = 1000, H = 620, L = 100, R = 30, T = 20, B = 50, NS = 'http://www.w3.org/2000/svg';
    var SERIES = ['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#17becf','#8c564b','#e377c2','#bcbd22','#7f7f7f'];
    var ROOFS = ['#333333','#b8860b','#006d77','#6a3d9a'];
    function el(name, attrs, parent) {
      var e = document.createElementNS(NS, name);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      if (parent) parent.appendChild(e);
      return e;
    }
    function si(v, unit) {
      var p = [[1e18,'E'],[1e15,'P'],[1e12,'T'],[1e9,'G'],[1e6,'M'],[1e3,'k'],[1,'']];
      for (var i = 0; i < p.length; i++) if (Math.abs(v) >= p[i][0]) return +(v / p[i][0]).toPrecision(3) + ' ' + p[i][1] + unit;
      return +v.toPrecision(3) + ' ' + unit;
    }
    function roofColor(name) { var i = data.roofs.indexOf(name); return ROOFS[(i < 0 ? 0 : i) % ROOFS.length]; }
    var lx0 = Math.log10(data.x.min), lx1 = Math.log10(data.x.max);
    var ly0 = Math.log10(data.y.min), ly1 = Math.log10(data.y.max);
    function px(v) { return L + (Math.log10(v) - lx0) / (lx1 - lx0) * (W - L - R); }
    function py(v) { return H - B - (Math.log10(v) - ly0) / (ly1 - ly0) * (H - T - B); }
    document.getElementById('title').textContent = data.title;
    document.getElementById('subtitle').textContent = data.subtitle;
    var svg = el('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'class': 'roofline-chart',
                         'font-family': 'sans-serif', 'font-size': 12}, document.getElementById('chart'));
    var axes = el('g', {'class': 'axes'}, svg);
    for (var e = Math.round(lx0); e <= Math.round(lx1); e++) {
      var x = px(Math.pow(10, e));
      el('line', {'class': 'grid', x1: x, y1: T, x2: x, y2: H - B}, axes);
      el('text', {'class': 'tick', x: x, y: H - B + 16, 'text-anchor': 'middle'}, axes).textContent = +Math.pow(10, e).toPrecision(3);
    }
    for (var e2 = Math.round(ly0); e2 <= Math.round(ly1); e2++) {
      var y = py(Math.pow(10, e2));
      el('line', {'class': 'grid', x1: L, y1: y, x2: W - R, y2: y}, axes);
      el('text', {'class': 'tick', x: L - 6, y: y + 4, 'text-anchor': 'end'}, axes).textContent = si(Math.pow(10, e2), 'FLOP/s');
    }
    el('rect', {'class': 'frame', x: L, y: T, width: W - L - R, height: H - T - B}, axes);
    el('text', {x: (L + W - R) / 2, y: H - 12, 'text-anchor': 'middle'}, axes).textContent = 'Arithmetic intensity (FLOP/byte)';
    el('text', {transform: 'translate(16 ' + (T + H - B) / 2 + ') rotate(-90)', 'text-anchor': 'middle'}, axes).textContent = 'Performance (FLOP/s)';

    var roofGroups = {};
    function roofGroup(name) {
      if (!roofGroups[name]) roofGroups[name] = el('g', {'class': 'roof', 'data-roof': name}, svg);
      return roofGroups[name];
    }
    // Ceilings not shown by default (chart.hpp's shown_ceilings) live in one group behind a toggle.
    var others = el('g', {'class': 'other-ceilings'}, svg);
    others.style.display = 'none';
    var otherCount = 0;
    var tip = document.getElementById('tip');
    function showTip(ev, title, rows) {
      var h = '<b></b><table>';
      tip.innerHTML = '<b></b><table></table>';
      tip.firstChild.textContent = title;
      var tb = tip.lastChild;
      rows.forEach(function (r) {
        var tr = document.createElement('tr');
        var a = document.createElement('td'); a.textContent = r[0];
        var b = document.createElement('td'); b.textContent = r[1];
        tr.appendChild(a); tr.appendChild(b); tb.appendChild(tr);
      });
      tip.style.display = 'block';
      tip.style.left = (ev.pageX + 14) + 'px';
      tip.style.top = (ev.pageY + 10) + 'px';
    }
    function hideTip() { tip.style.display = 'none'; }

    data.lines.forEach(function (c) {
      var g = c.shown === false ? others : roofGroup(c.roof), color = roofColor(c.roof);
      if (c.shown === false) otherCount++;
      var attrs = {'class': 'ceiling ' + (c.measured ? 'measured' : 'theoretical') + ' ' + c.kind,
                   d: 'M' + px(c.x0) + ',' + py(c.y0) + ' L' + px(c.x1) + ',' + py(c.y1), stroke: color,
                   'data-id': c.id};
      if (!c.measured) attrs['stroke-dasharray'] = '6 4';
      var path = el('path', attrs, g);
      path.addEventListener('mousemove', function (ev) {
        showTip(ev, c.roof + ': ' + c.label, [['Ceiling', c.text], ['Kind', c.kind], ['Source', c.measured ? 'measured' : 'theoretical']]);
      });
      path.addEventListener('mouseleave', hideTip);
      var compute = c.kind === 'compute';
      var t = el('text', {'class': 'clabel', fill: color, 'text-anchor': compute ? 'end' : 'middle',
                          x: compute ? px(c.x1) - 4 : (px(c.x0) + px(c.x1)) / 2,
                          y: compute ? py(c.y1) - 4 : (py(c.y0) + py(c.y1)) / 2 - 6}, g);
      t.textContent = c.label + ' ' + c.text;
    });
    data.ridges.forEach(function (r) {
      if (r.ai < data.x.min || r.ai > data.x.max || r.flops < data.y.min || r.flops > data.y.max) return;
      var c = el('circle', {'class': 'ridge', cx: px(r.ai), cy: py(r.flops), r: 4, stroke: roofColor(r.roof)},
                 r.shown === false ? others : roofGroup(r.roof));
      c.addEventListener('mousemove', function (ev) {
        showTip(ev, 'Ridge point', [['Roof', r.roof], ['Compute', r.compute], ['Memory', r.memory],
                                    ['AI', +r.ai.toPrecision(3) + ' FLOP/B'], ['Source', r.measured ? 'measured' : 'theoretical']]);
      });
      c.addEventListener('mouseleave', hideTip);
    });
    // Every point in one layer, the largest (longest) drawn first so that a
    // smaller one on top of it stays reachable; a series' toggle hides its own.
    var pointsGroup = el('g', {'class': 'points'}, svg), all = [], seriesPoints = [], keys = [];
    function seriesColor(s) {
      var k = keys.indexOf(s.color_key);
      if (k < 0) { keys.push(s.color_key); k = keys.length - 1; }
      return SERIES[k % SERIES.length];
    }
    data.series.forEach(function (s, i) {
      seriesPoints.push([]);
      s.points.forEach(function (p) { if (p.ai > 0 && p.flops > 0) all.push({s: s, i: i, p: p}); });
    });
    all.sort(function (a, b) { return (b.p.r || 5) - (a.p.r || 5); });
    all.forEach(function (q) {
      var s = q.s, p = q.p;
      var c = el('circle', {'class': 'pt', cx: px(p.ai), cy: py(p.flops), r: p.r || 5, fill: seriesColor(s),
                            'fill-opacity': 0.8, 'data-series': s.name, 'data-name': s.name + ': ' + p.name}, pointsGroup);
      c.addEventListener('mousemove', function (ev) {
        // Points under the cursor beside this one (repeated layers land on the same spot): named too.
        var m = svg.getScreenCTM(), cx = (ev.clientX - m.e) / m.a, cy = (ev.clientY - m.f) / m.d, also = [];
        all.forEach(function (o) {
          if (o.c === c || o.c.style.display === 'none') return;
          var dx = o.x - cx, dy = o.y - cy, rr = (o.p.r || 5);
          if (dx * dx + dy * dy <= rr * rr) also.push(o.s.name + ': ' + o.p.name);
        });
        var rows = p.fields.slice();
        if (also.length) rows.push(['Also here', also.slice(0, 8).join('; ') + (also.length > 8 ? ' (' + also.length + ')' : '')]);
        showTip(ev, s.name + ': ' + p.name, rows);
      });
      c.addEventListener('mouseleave', hideTip);
      q.c = c; q.x = px(p.ai); q.y = py(p.flops);
      seriesPoints[q.i].push(c);
    });
    var legend = document.getElementById('legend');
    function toggle(text, swatch, target, on) {
      var label = document.createElement('label');
      var box = document.createElement('input');
      box.type = 'checkbox'; box.checked = on !== false;
      box.addEventListener('change', function () {
        (Array.isArray(target) ? target : [target]).forEach(function (t) { t.style.display = box.checked ? '' : 'none'; });
      });
      label.appendChild(box); label.appendChild(swatch); label.appendChild(document.createTextNode(text));
      legend.appendChild(label);
    }
    data.series.forEach(function (s, i) {
      var sw = document.createElement('span'); sw.className = 'swatch'; sw.style.background = seriesColor(s);
      toggle(s.name + ' (' + s.points.length + ')', sw, seriesPoints[i], s.visible !== false);
      if (s.visible === false) seriesPoints[i].forEach(function (c) { c.style.display = 'none'; });
    });
    data.roofs.forEach(function (name) {
      if (!roofGroups[name]) return;
      var sw = document.createElement('span'); sw.className = 'line'; sw.style.borderColor = roofColor(name);
      toggle(name + ' ceilings (solid: measured, dashed: theoretical)', sw, roofGroups[name]);
    });
    if (otherCount > 0) {
      var sw2 = document.createElement('span'); sw2.className = 'line'; sw2.style.borderColor = '#999';
      toggle('other ceilings (' + otherCount + ')', sw2, others, false);
    }
    // Labels: where one would overlap a label placed before it, it moves up
    // past that one (the visible labels only; again after each toggle).
    function boxOf(t) { var b = t.getBBox(); return {x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height}; }
    function hits(a, b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }
    function visibleLabels() {
      return Array.prototype.filter.call(svg.querySelectorAll('text.clabel'), function (t) {
        for (var n = t; n && n !== svg; n = n.parentNode) if (n.style && n.style.display === 'none') return false;
        return true;
      });
    }
    function placeLabels() {
      var placed = [];
      visibleLabels().forEach(function (t) {
        t.setAttribute('y', t.dataset.y0 || (t.dataset.y0 = t.getAttribute('y')));
        for (var guard = 0; guard < 64; guard++) {
          var b = boxOf(t), hit = null;
          for (var k = 0; k < placed.length && !hit; k++) if (hits(b, placed[k])) hit = placed[k];
          if (!hit) { placed.push(b); break; }
          t.setAttribute('y', +t.getAttribute('y') - (b.y1 - hit.y0) - 1);
        }
      });
      var overlaps = 0, boxes = visibleLabels().map(boxOf);
      for (var a = 0; a < boxes.length; a++) for (var b = a + 1; b < boxes.length; b++) if (hits(boxes[a], boxes[b])) overlaps++;
      document.body.dataset.labelOverlaps = String(overlaps);
      document.body.dataset.labels = String(boxes.length);
    }
    placeLabels();
    legend.addEventListener('change', placeLabels);
    // #selftest: every point is hovered once; body[data-hoverable] counts those that showed their tooltip.
    if (location.hash === '#selftest') {
      var ok = 0;
      svg.querySelectorAll('circle.pt').forEach(function (c) {
        hideTip();
        var shownBefore = c.style.display;
        c.style.display = '';  // hidden series are hovered too (as after their toggle)
        c.scrollIntoView({block: 'center', inline: 'center'});
        var r = c.getBoundingClientRect();
        var x = r.left + r.width / 2, y = r.top + r.height / 2, at = document.elementFromPoint(x, y);
        if (at && at.classList && at.classList.contains('pt')) {
          at.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: x, clientY: y}));
          // Hovering its centre names it, whichever point is on top there.
          if (tip.style.display === 'block' && tip.textContent.indexOf(c.dataset.name) >= 0) ok++;
        }
        c.style.display = shownBefore;
      });
      hideTip();
      document.body.dataset.hoverable = String(ok);
    }
    var notes = document.getElementById('notes');
    data.notes.forEach(function (n) { var li = document.createElement('li'); li.textContent = n; notes.appendChild(li); });
    var drawn = svg.querySelectorAll('circle.pt').length;
    var lines = svg.querySelectorAll('path.ceiling').length;
    document.body.dataset.rendered = String(drawn);
    var shownLines = data.lines.filter(function (c) { return c.shown !== false; }).length;
    var ridgesDrawn = Array.prototype.filter.call(svg.querySelectorAll('circle.ridge'), function (r) {
      return r.parentNode !== others;
    }).length;
    status.textContent = 'rendered ' + drawn + ' points, ' + lines + ' ceilings (' + shownLines + ' shown), ' +
                         ridgesDrawn + ' ridge points';
  } catch (err) {
    document.body.dataset.rendered = 'error';
    status.textContent = 'chart error: ' + err;
  }
})();
)js";

}  // namespace

std::string render_html(const Chart& chart) {
  Layout l = layout(chart);
  std::string json = script_safe(json_text(chart_json(chart, l)));
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  o += xml_escape(chart.title);
  o += "</title>\n<style>";
  o += kPageCss;
  o += svg_css();
  o += "</style>\n</head>\n<body>\n<h2 id=\"title\"></h2>\n<div id=\"subtitle\"></div>\n";
  o += "<noscript>This chart is drawn by JavaScript; the .svg file beside it is the static version.</noscript>\n";
  o += "<div id=\"wrap\"><div id=\"chart\"></div><div id=\"legend\"></div></div>\n";
  o += "<div id=\"chart-status\">not rendered</div>\n<ul id=\"notes\"></ul>\n<div id=\"tip\"></div>\n";
  o += "<script type=\"application/json\" id=\"chart-data\">";
  o += json;
  o += "</script>\n<script>";
  o += kScript;
  o += "</script>\n</body>\n</html>\n";
  return o;
}

}  // namespace roofline::report
