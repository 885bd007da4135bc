// The console's only stylesheet and script, served from /console/assets/ so the page's
// Content-Security-Policy can forbid every inline script and style. No build step: plain text.

/** The stylesheet: readable on a laptop and a phone, visible focus for keyboard use. */
export const CONSOLE_CSS = `
:root { --ink:#1d2433; --muted:#5b6475; --line:#d8dde6; --bg:#f6f7f9; --card:#fff; --accent:#1f5fbf; --ok:#17753a; --bad:#b3261e; --warn:#8a5a00; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--ink); background:var(--bg); }
a { color:var(--accent); }
:focus-visible { outline:3px solid var(--accent); outline-offset:2px; }
header.top { display:flex; flex-wrap:wrap; gap:.5rem 1.5rem; align-items:center; padding:.6rem 1rem; background:var(--ink); color:#fff; }
header.top a { color:#fff; text-decoration:none; font-weight:600; }
header.top nav { display:flex; gap:1rem; flex-wrap:wrap; }
header.top .who { margin-left:auto; display:flex; gap:.75rem; align-items:center; font-size:.9rem; }
header.top button { background:transparent; color:#fff; border:1px solid #fff8; }
main { max-width:1100px; margin:0 auto; padding:1rem; }
h1 { font-size:1.4rem; margin:.5rem 0 1rem; }
h2 { font-size:1.1rem; margin:1.2rem 0 .5rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:1rem; margin:0 0 1rem; }
.card.gone { opacity:.6; border-style:dashed; }
.facts { display:grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap:.5rem 1rem; margin:.5rem 0; }
.facts div span { display:block; color:var(--muted); font-size:.8rem; }
.muted { color:var(--muted); }
.flash { padding:.6rem .8rem; border-radius:6px; margin-bottom:1rem; }
.flash.ok { background:#e7f4ec; color:var(--ok); }
.flash.error { background:#fbeaea; color:var(--bad); }
.notice { background:#fff5dc; color:var(--warn); padding:.5rem .8rem; border-radius:6px; margin:.5rem 0; }
.hidden { display:none; }
form.inline { display:inline; }
label { display:block; font-weight:600; margin:.5rem 0 .2rem; }
input[type=text], input[type=password], textarea { width:100%; max-width:36rem; padding:.45rem; border:1px solid var(--line); border-radius:6px; font:inherit; }
textarea { min-height:3.2rem; }
button { font:inherit; padding:.4rem .9rem; border-radius:6px; border:1px solid var(--line); background:#fff; cursor:pointer; }
button.approve { background:var(--ok); color:#fff; border-color:var(--ok); }
button.deny, button.danger { background:var(--bad); color:#fff; border-color:var(--bad); }
button:disabled { opacity:.5; cursor:not-allowed; }
.actions { display:flex; flex-wrap:wrap; gap:.5rem; margin-top:.5rem; }
table { border-collapse:collapse; width:100%; background:var(--card); font-size:.9rem; }
th, td { text-align:left; padding:.35rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f5; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.table-wrap { overflow-x:auto; }
.event { display:inline-block; background:#fff5dc; color:var(--warn); border-radius:4px; padding:0 .35rem; font-size:.8rem; }
details pre { white-space:pre-wrap; word-break:break-word; background:#f1f3f6; padding:.5rem; border-radius:6px; max-height:20rem; overflow:auto; }
ul.tools { margin:0; padding-left:1rem; }
svg.chart { width:100%; height:auto; background:#fff; border:1px solid var(--line); border-radius:8px; }
svg.chart .line { fill:none; stroke:var(--accent); stroke-width:2; }
svg.chart .point { fill:var(--accent); }
svg.chart .clearing { stroke:var(--ok); stroke-width:2; stroke-dasharray:4 3; }
svg.chart .compaction { stroke:var(--bad); stroke-width:2; stroke-dasharray:1 3; }
svg.chart .axis { stroke:#8a93a3; }
svg.chart text { font-size:11px; fill:var(--muted); }
.legend { display:flex; gap:1rem; flex-wrap:wrap; font-size:.85rem; color:var(--muted); margin:.3rem 0; }
.legend .k-clearing { color:var(--ok); } .legend .k-compaction { color:var(--bad); }
.note-superseded, .note-expired { color:var(--muted); }
ol.conversation { list-style:none; margin:0; padding:0; display:flex; flex-direction:column; gap:.5rem; }
ol.conversation .entry { background:var(--card); border:1px solid var(--line); border-left:4px solid var(--line); border-radius:6px; padding:.5rem .75rem; max-width:100%; overflow-wrap:anywhere; }
ol.conversation .entry p { margin:.25rem 0; }
ol.conversation .who { font-size:.8rem; font-weight:600; color:var(--muted); }
ol.conversation .words { white-space:pre-wrap; }
ol.conversation .customer { border-left-color:var(--accent); margin-right:15%; }
ol.conversation .reply { border-left-color:var(--ok); margin-left:15%; }
ol.conversation .reply.held { border-left-color:var(--bad); border-style:dashed; }
ol.conversation .tool, ol.conversation .agent-note, ol.conversation .note { background:#fafbfc; font-size:.9rem; }
ol.conversation .tool.error { border-left-color:var(--bad); }
ol.conversation .decision { border-left-color:var(--warn); }
ol.conversation .hand-off { border-left-color:var(--bad); background:#fff8f7; }
ol.conversation .bad { color:var(--bad); }
ol.conversation code { font-size:.85rem; }
ol.conversation details pre { max-height:none; }
@media (max-width: 640px) { ol.conversation .customer { margin-right:0; } ol.conversation .reply { margin-left:0; } }
@media (max-width: 640px) { main { padding:.5rem; } th, td { padding:.3rem; } header.top .who { margin-left:0; } }
`;

/**
 * The script: the inbox asks every CASEWORK_CONSOLE_POLL_SECONDS (15 s) which requests are still pending, and marks a card
 * another person decided (its buttons disabled, a note saying so) and says when new ones came.
 * Without JavaScript the inbox still works: a submit re-checks on the server.
 */
export const CONSOLE_JS = `
(function () {
  var inbox = document.querySelector('[data-inbox]');
  if (!inbox) return;
  function check() {
    fetch('/console/inbox/pending', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (state) {
        if (!state) return;
        var pending = {};
        state.requestIds.forEach(function (id) { pending[id] = true; });
        var shown = {};
        document.querySelectorAll('[data-request-id]').forEach(function (card) {
          var id = card.getAttribute('data-request-id');
          shown[id] = true;
          if (!pending[id] && !card.classList.contains('gone')) {
            card.classList.add('gone');
            card.querySelectorAll('button, textarea').forEach(function (el) { el.disabled = true; });
            var note = card.querySelector('[data-gone-note]');
            if (note) note.classList.remove('hidden');
          }
        });
        var fresh = state.requestIds.filter(function (id) { return !shown[id]; }).length;
        var banner = document.querySelector('[data-new-requests]');
        if (banner && fresh > 0) {
          banner.textContent = fresh + (fresh === 1 ? ' new request is' : ' new requests are') + ' waiting: reload the page to see ' + (fresh === 1 ? 'it' : 'them') + '.';
          banner.classList.remove('hidden');
        }
      })
      .catch(function () {});
  }
  var every = Number(inbox.getAttribute('data-poll-ms')) || 15000;
  setInterval(check, every);
  // Coming back to the tab checks at once: the person may have been away longer than a poll.
  document.addEventListener('visibilitychange', function () { if (!document.hidden) check(); });
})();
`;
