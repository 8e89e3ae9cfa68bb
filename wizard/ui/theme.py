"""Styles and browser scripts of the wizard UI (CSS passed to Blocks.launch(css=...) in Gradio 6)."""

#: milliseconds after the last panel update before exports, downloads, the browser copy of the
#: state and the deferred step widgets follow (one request per pause, not per keystroke)
SYNC_DELAY_MS = 400

CSS = """
.gradio-container {overflow: visible !important;}
#sw-header {align-items: center !important; gap: 8px !important; flex-wrap: wrap;}
#sw-title {min-width: 220px !important; flex: 1 1 220px !important;}
#sw-title .sw-brand {font-size: 1.35em; font-weight: 800; line-height: 1.1;}
#sw-title .sw-tag {font-size: .8em; opacity: .75; line-height: 1.2;}
#sw-header button {white-space: nowrap;}
#sw-import-row:not(.sw-open) {display: none !important;}
.sw-summary {border-radius: 10px; padding: 10px 12px; margin-bottom: 6px; border: 1px solid var(--border-color-primary);}
.sw-summary.sw-v-error {background: #fdecec; border-color: #f3b4b4;}
.sw-summary.sw-v-warning {background: #fff6e5; border-color: #f5d49a;}
.sw-summary.sw-v-ok {background: #eaf7ee; border-color: #a8dcb7;}
.dark .sw-summary.sw-v-error {background: #3b1f1f;} .dark .sw-summary.sw-v-warning {background: #3b321f;} .dark .sw-summary.sw-v-ok {background: #1f3b27;}
.sw-verdict {font-weight: 700; font-size: 1.05em; margin-bottom: 4px;}
.sw-small {font-size: .82em; opacity: .75; margin-top: 4px;}
.sw-note {font-size: .82em; margin-top: 4px; opacity: .9;}
.sw-note::before {content: "ⓘ "; }
.sw-action-note {font-size: .82em; margin-top: 6px; font-weight: 600;}
.sw-pill {display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: .8em; font-weight: 600; margin-right: 4px; background: #e5e7eb; color: #111;}
.sw-pill.sw-error {background: #dc2626; color: #fff;} .sw-pill.sw-warning {background: #d97706; color: #fff;}
.sw-pill.sw-info {background: #2563eb; color: #fff;} .sw-pill.sw-ok {background: #16a34a; color: #fff;}
.sw-group {font-weight: 700; margin: 8px 0 3px; font-size: .9em; text-transform: uppercase; letter-spacing: .04em;}
.sw-g-error {color: #b91c1c;} .sw-g-warning {color: #b45309;} .sw-g-info {color: #1d4ed8;}
.sw-slot {margin-bottom: 6px;}
.sw-card {border-left: 4px solid #9ca3af; padding: 6px 10px; border-radius: 6px; background: var(--block-background-fill);
          border-top: 1px solid var(--border-color-primary); border-right: 1px solid var(--border-color-primary);
          border-bottom: 1px solid var(--border-color-primary); overflow-wrap: anywhere;}
.sw-card.sw-error {border-left-color: #dc2626;} .sw-card.sw-warning {border-left-color: #d97706;} .sw-card.sw-info {border-left-color: #2563eb;}
.sw-head {font-size: .93em;} .sw-msg {font-size: .86em; margin-top: 3px; line-height: 1.35;}
.sw-fields {font-size: .8em; margin-top: 3px; opacity: .8;}
.sw-actions {display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px;}
.sw-btn {font-size: .78em; padding: 2px 8px; border-radius: 6px; border: 1px solid var(--border-color-primary);
         background: var(--button-secondary-background-fill); color: var(--button-secondary-text-color);
         cursor: pointer; max-width: 100%; white-space: normal; text-align: left; line-height: 1.3;}
.sw-btn:hover {filter: brightness(.95);}
.sw-btn.sw-fix {background: var(--button-primary-background-fill); color: var(--button-primary-text-color); border-color: transparent;}
.sw-btn:disabled {opacity: .5; cursor: progress;}
.sw-undo-row {margin: 2px 0 6px;}
.sw-badge {font-size: .7em; font-weight: 700; padding: 1px 6px; border-radius: 4px; color: #fff; background: #6b7280;}
.sw-badge.sw-error {background: #dc2626;} .sw-badge.sw-warning {background: #d97706;} .sw-badge.sw-info {background: #2563eb;}
.sw-overflow ul {margin: 2px 0 0 16px; font-size: .85em;}
.sw-xc {border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; min-height: 80px;}
.sw-xc.sw-v-error {border-color: #f3b4b4;} .sw-xc.sw-v-ok {border-color: #a8dcb7;}
.sw-xc-off, .sw-xc-stale {opacity: .75;}
.sw-pre {white-space: pre-wrap; font-size: .8em; max-height: 260px; overflow: auto;}
.sw-status {padding: 8px 10px; border-radius: 8px; border: 1px solid var(--border-color-primary);}
.sw-st-healthy {background: #eaf7ee;} .sw-st-failed, .sw-st-exited {background: #fdecec;} .sw-st-starting {background: #fff6e5;}
.sw-hint {font-size: .88em; padding: 6px 10px; border-radius: 8px; background: #fff6e5; border: 1px solid #f5d49a;}
.dark .sw-hint {background: #3b321f;}
@media (min-width: 900px) {
  #sw-sidebar {position: sticky; top: 8px; align-self: flex-start; max-height: calc(100vh - 16px); overflow-y: auto;}
}
.sw-mono textarea {font-family: var(--font-mono), ui-monospace, monospace !important; font-size: .85em !important;}
[data-testid="block-info"] {white-space: normal !important; overflow: visible !important; text-overflow: clip !important;}
#sw-hw-facts th, #sw-hw-facts td, #sw-drafter-facts td, #sw-drafter-facts th {word-break: normal !important; overflow-wrap: normal !important; hyphens: none;}
#sw-hw-facts th, #sw-hw-facts td:first-child, #sw-drafter-facts td:first-child {white-space: nowrap;}
#sw-hw-facts td:last-child, #sw-drafter-facts td:last-child {overflow-wrap: anywhere !important;}
.sw-flash {outline: 3px solid #f59e0b !important; border-radius: 6px; transition: outline .3s;}
#sw-tabs button[role=tab] {padding-left: 10px; padding-right: 10px;}
"""

#: ``js_on_load`` of the findings panel (a gr.HTML): a click on "Go to field" switches the tab
#: and focuses the field in the browser (no request); "Apply" and "Undo" trigger the panel's
#: ``click`` event with the rule and fix description; after each panel update the deferred work
#: (exports, downloads, browser copy, step widgets) is requested once the user pauses.
PANEL_JS = """
const swGoto = (step, id) => {
  const t = document.getElementById('sw-tab-' + step + '-button');
  if (t && t.getAttribute('aria-selected') !== 'true') t.click();
  setTimeout(() => {
    const el = document.getElementById(id);
    if (!el) return;
    el.scrollIntoView({behavior: 'smooth', block: 'center'});
    el.classList.add('sw-flash');
    setTimeout(() => el.classList.remove('sw-flash'), 1500);
    const inp = el.querySelector('input, textarea, [contenteditable=true]');
    if (inp) inp.focus();
  }, 150);
};
element.addEventListener('click', (e) => {
  const b = e.target.closest('button');
  if (!b || !element.contains(b)) return;
  if (b.dataset.swGoto) { swGoto(b.dataset.swStep, b.dataset.swGoto); return; }
  if (b.dataset.swFix) { b.disabled = true; trigger('click', {act: 'fix', rule: b.dataset.swRule, fix: b.dataset.swFix}); return; }
  if (b.dataset.swUndo) { b.disabled = true; trigger('click', {act: 'undo'}); return; }
});
// the sync follows a pause: SYNC_DELAY_MS after the last panel update *and* the last key or
// pointer press, so it never lands in the middle of the next pick or keystroke (a sync that
// overlapped a pick doubled its latency: benchmarks/ui_latency.py)
const swArm = () => {
  clearTimeout(window.__swSync);
  window.__swSync = setTimeout(() => {
    window.__swSyncDue = false;
    const s = document.getElementById('sw-sync'); if (s) s.click();
  }, %d);
};
watch('value', () => { window.__swSyncDue = true; swArm(); });
if (!window.__swSyncListen) {
  window.__swSyncListen = true;
  for (const ev of ['pointerdown', 'keydown']) {
    document.addEventListener(ev, () => { if (window.__swSyncDue) swArm(); }, {capture: true, passive: true});
  }
}
""" % SYNC_DELAY_MS

#: toggles the import row (no request): the "Import…" button of the header
IMPORT_TOGGLE_JS = """
() => {
  const r = document.getElementById('sw-import-row');
  if (!r) return;
  r.classList.toggle('sw-open');
  if (r.classList.contains('sw-open')) setTimeout(() => { const t = r.querySelector('#sw-import-cmd textarea'); if (t) t.focus(); }, 50);
}
"""
